public import Synchronization

/// The calls running through one observation, and the observation's end: the one place that says whether a
/// handler may begin, and that lets whoever ends the observation wait for the calls already begun.
///
/// - ``enter()`` begins a call, and fails once the gate is closed; ``exit()`` ends it.
/// - ``close()`` ends the observation at once and never waits: a `deinit` may call it.
/// - ``waitForCalls(excluding:)`` waits, blocking the thread on a condition, until the calls begun before the
///   close have returned; its `async` twin suspends instead. Neither spins.
///
/// Entering and exiting cost one atomic operation each; waiting is rare and pays for itself: the first waiter makes
/// the condition, and from then on every exit wakes it.
@usableFromInline
package final class CallGate: Sendable {
    /// Bit 0: closed. Bit 1: someone has waited (exits must wake). Bits 2 and up: calls running.
    @usableFromInline let word = Atomic<UInt64>(0)
    let waiters = LazyReference<WaitList>()

    @usableFromInline static var closedBit: UInt64 { 1 }
    @usableFromInline static var waitedBit: UInt64 { 2 }
    @usableFromInline static var callUnit: UInt64 { 4 }

    @inlinable
    package init() {}

    /// Whether no close has happened yet.
    @inlinable
    package var isOpen: Bool {
        word.load(ordering: .acquiring) & Self.closedBit == 0
    }

    /// How many calls are running now.
    @inlinable
    package var runningCalls: Int {
        Int(word.load(ordering: .acquiring) / Self.callUnit)
    }

    /// Begins a call; false (and nothing begun) once the gate is closed.
    @inlinable
    package func enter() -> Bool {
        var current = word.load(ordering: .relaxed)
        while current & Self.closedBit == 0 {
            let (exchanged, original) = word.compareExchange(
                expected: current, desired: current + Self.callUnit, ordering: .sequentiallyConsistent)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Ends a call begun by ``enter()``, waking whoever waits for calls.
    @inlinable
    package func exit() {
        let now = word.subtract(Self.callUnit, ordering: .sequentiallyConsistent).newValue
        if now & Self.waitedBit != 0 { wake(runningCalls: Int(now / Self.callUnit)) }
    }

    /// Closes the gate: no call begins from now on. True for the call that closed it. Never waits.
    @inlinable
    @discardableResult
    package func close() -> Bool {
        word.bitwiseOr(Self.closedBit, ordering: .sequentiallyConsistent).oldValue & Self.closedBit == 0
    }

    /// Blocks the calling thread until at most `own` calls run — `own` being the caller's own calls, which it
    /// cannot wait for (a handler that ends its own observation). Do not call it on Swift concurrency's threads
    /// while a call may run long: use the `async` form there.
    package func waitForCalls(excluding own: Int = 0) {
        guard runningCalls > own else { return }
        waiters.storeIfNil(WaitList()).block { isDone(own) }
    }

    /// Suspends until at most `own` calls run (see ``waitForCalls(excluding:)``).
    package func waitForCalls(excluding own: Int = 0) async {
        guard runningCalls > own else { return }
        await waiters.storeIfNil(WaitList()).suspend(key: UInt64(own)) { isDone(own) }
    }

    /// Under the wait list's lock: raises the bit that makes exits wake it, then looks. An exit that missed the bit
    /// left a count this look sees.
    func isDone(_ own: Int) -> Bool {
        word.bitwiseOr(Self.waitedBit, ordering: .sequentiallyConsistent)
        return Int(word.load(ordering: .sequentiallyConsistent) / Self.callUnit) <= own
    }

    @usableFromInline
    func wake(runningCalls: Int) {
        waiters.load()?.wake { runningCalls <= Int($0) }
    }
}
