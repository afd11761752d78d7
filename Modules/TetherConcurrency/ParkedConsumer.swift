/// The consumer side of a hand-over point — a buffer, an inbox, a feed — that one task reads: under the lock, take
/// what is ready, or park the task's continuation in the state beside it, where a producer finds it (under the same
/// lock) and resumes it outside. The bookkeeping every such point repeats, once.
///
/// ```swift
/// struct Inbox { var items: [Int] = []; var consumer: CheckedContinuation<Int?, Never>?; var isClosed = false }
/// let inbox = LockedValue(Inbox())
/// // Consumer:
/// let next = await inbox.takeOrPark(\.consumer) { inbox in
///     inbox.items.isEmpty ? (inbox.isClosed ? .some(nil) : nil) : .some(inbox.items.removeFirst())
/// }
/// // Producer:
/// let parked = inbox.withLock { inbox in inbox.consumer.take() ?? { inbox.items.append(item); return nil }() }
/// parked?.resume(returning: item)
/// ```
extension LockedValue where Value: Sendable {
    /// Returns what `take` finds ready (it runs under the lock, and may change the state), or else parks the calling
    /// task in `slot` until a producer resumes it. At most one task may be parked: parking a second is a bug.
    ///
    /// What is ready is returned without suspending: a continuation resumed at once would still suspend the task and
    /// schedule it again, a trip through its executor: microseconds, where returning takes nanoseconds.
    ///
    /// In a generic type, pass a key path stored once: one written at the call (`\.waiter`) is instantiated at each
    /// call there, which costs microseconds on every hand-over.
    @inlinable
    package func takeOrPark<Element: Sendable>(
        _ slot: WritableKeyPath<Value, CheckedContinuation<Element, Never>?>,
        take: (inout Value) -> Element?
    ) async -> Element {
        if let ready = withLock({ take(&$0) }) { return ready }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Element, Never>) in
            let ready = withLock { value -> Element? in
                if let element = take(&value) { return element }
                assert(value[keyPath: slot] == nil, "a second consumer parked at one hand-over point")
                value[keyPath: slot] = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Resumes the parked consumer, if any, with `element`; true when there was one. Use it when the element is not
    /// also to be kept in the state (cancellation, the end of the stream).
    @discardableResult
    package func resumeParked<Element: Sendable>(
        _ slot: WritableKeyPath<Value, CheckedContinuation<Element, Never>?>, returning element: Element
    ) -> Bool {
        guard let parked = withLock({ $0[keyPath: slot].take() }) else { return false }
        parked.resume(returning: element)
        return true
    }
}

extension LockedValue where Value: Sendable {
    /// The waiting side of an admission queue (a semaphore, a gate taking turns): returns at once when `admit` (under
    /// the lock) lets the caller in, or else appends `entry(continuation)` to the queue in the state and suspends
    /// until a releaser takes the entry out (under the lock) and resumes it (outside). Many may wait; they are kept
    /// in arrival order. Admitted at once, the caller does not suspend (see ``takeOrPark(_:take:)``).
    package func admitOrQueue<Entry>(
        _ queue: WritableKeyPath<Value, [Entry]>, admit: (inout Value) -> Bool,
        entry: (CheckedContinuation<Void, Never>) -> Entry
    ) async {
        if withLock({ admit(&$0) }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = withLock { value -> Bool in
                if admit(&value) { return true }
                value[keyPath: queue].append(entry(continuation))
                return false
            }
            if admitted { continuation.resume() }
        }
    }
}
