/// Who waits for a condition on some atomic state — ``CallGate``'s calls to end, ``Watermark``'s value to rise:
/// blocked threads sleep on a condition, suspended tasks wait as continuations with the key they wait for.
///
/// The owner keeps a count of waiters (or a flag) that it raises before looking at its state under this list's lock,
/// and wakes the list after every change while the count is not zero; sequential consistency on both sides makes
/// sure that either the waiter sees the change or the change sees the waiter.
final class WaitList: Sendable {
    struct State {
        var suspended: [(key: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    let state = ConditionLock(State())

    /// Blocks the calling thread until `isDone` holds; it is checked under the list's lock, at once and after every
    /// ``wake(resuming:)``.
    func block(until isDone: () -> Bool) {
        state.withLock(waitingUntil: { _ in isDone() }) { _ in }
    }

    /// Suspends until `isDone` holds: at once if it does now, else when ``wake(resuming:)`` accepts `key`.
    func suspend(key: UInt64, until isDone: () -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if isDone() { return true }
                state.suspended.append((key, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Wakes every blocked thread to look again, and resumes the suspended tasks whose key `isReady` accepts.
    func wake(resuming isReady: (UInt64) -> Bool) {
        let ready = state.withLockThenBroadcast { state in
            var ready: [CheckedContinuation<Void, Never>] = []
            state.suspended.removeAll { waiter in
                guard isReady(waiter.key) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}
