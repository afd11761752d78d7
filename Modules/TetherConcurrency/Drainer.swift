/// "Claim the drainer": of the threads that offer work, the one that finds nobody draining becomes the drainer and
/// hands work over, one item at a time and in order, until none is left; the others leave their work to it. Work
/// is handled outside the lock, never by two threads at once, and never left behind: the role is given up in the
/// same critical section that finds no more work, so work offered after that is drained by its own offerer.
///
/// Keep a `Drainer` in the state its lock guards, beside the work:
///
/// ```swift
/// if state.withLock({ $0.drainer.claim(hasWork: !$0.events.isEmpty) }) {
///     state.drain(\.drainer, next: { $0.events.popFirst() }) { event in deliver(event) }
/// }
/// ```
@usableFromInline
package struct Drainer: Sendable {
    @usableFromInline var isDraining = false

    @inlinable
    package init() {}

    /// Whether a thread holds the role now.
    @inlinable
    package var isClaimed: Bool { isDraining }

    /// Under the lock: takes the role when there is work and nobody holds it. True for the caller, who must drain.
    @inlinable
    package mutating func claim(hasWork: Bool = true) -> Bool {
        guard hasWork, !isDraining else { return false }
        isDraining = true
        return true
    }

    /// Under the lock, when the drainer finds no more work: gives the role up.
    @inlinable
    package mutating func release() {
        isDraining = false
    }
}

extension LockedValue where Value: Sendable {
    /// The drainer's loop, for the caller whose ``Drainer/claim(hasWork:)`` returned true: takes each item with
    /// `next` under the lock and hands it to `handle` outside it; when `next` finds none, releases the role in the
    /// same critical section.
    @inlinable
    package func drain<Item>(
        _ drainer: WritableKeyPath<Value, Drainer>, next: (inout Value) -> Item?, handle: (Item) -> Void
    ) {
        while let item = withLock({ value -> Item? in
            if let item = next(&value) { return item }
            value[keyPath: drainer].release()
            return nil
        }) {
            handle(item)
        }
    }
}
