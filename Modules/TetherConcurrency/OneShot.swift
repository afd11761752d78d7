/// A value set once and awaited by any number of tasks, before or after it is set: the continuation bookkeeping of
/// every one-time event in Tether (a request's outcome, a cancellation latch, a child process's exit).
///
/// - ``fire(_:)`` sets the value and resumes every waiter, outside the lock; only the first call counts.
/// - ``wait()`` returns the value at once when it is set, and otherwise suspends (never blocks) until it is.
///
/// A waiter is not resumed by its task's cancellation: an event that should end on cancellation fires from a
/// cancellation handler (see `waitForCancellation()` in MemoryPressureKit).
package final class OneShot<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var value: Value?
        var waiters: [CheckedContinuation<Value, Never>] = []
    }

    private let state = LockedValue(State())

    package init() {}

    /// The value, once set.
    package var value: Value? {
        state.withLock { $0.value }
    }

    /// Sets the value and resumes every waiter; false, and nothing changed, when it was already set.
    @discardableResult
    package func fire(_ value: Value) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>]? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    /// The value: at once if it is set, else when it is.
    package func wait() async -> Value {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

extension OneShot where Value == Void {
    /// Fires the event.
    @discardableResult
    package func fire() -> Bool { fire(()) }

    /// Whether it has fired.
    package var hasFired: Bool { value != nil }
}
