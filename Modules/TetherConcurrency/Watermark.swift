public import Synchronization

/// A number that only grows — a ticket delivered, a commit applied — and waits, blocking or suspended, until it
/// reaches a mark. Advancing costs one atomic store and one load while nobody waits; a waiter sleeps on a condition
/// (or suspends), never polls.
@usableFromInline
package final class Watermark: Sendable {
    /// The value shifted left by one; bit 0: someone has waited (advances must wake).
    @usableFromInline let word = Atomic<UInt64>(0)
    let waiters = AtomicLazyReference<Waiters>()

    @inlinable
    package init() {}

    /// The current value.
    @inlinable
    package var value: UInt64 {
        word.load(ordering: .acquiring) >> 1
    }

    /// Raises the value to `mark` (a lower mark changes nothing) and wakes those waiting for it. Only one thread
    /// advances a given watermark at a time.
    @inlinable
    package func advance(to mark: UInt64) {
        let current = word.load(ordering: .relaxed) >> 1
        guard mark > current else { return }
        // An addition, not a store, so that a waiter's bit raised meanwhile survives (and is seen here).
        let now = word.wrappingAdd((mark - current) << 1, ordering: .sequentiallyConsistent).newValue
        if now & 1 != 0 { wake(at: mark) }
    }

    /// Blocks the calling thread until the value is at least `mark`.
    package func wait(until mark: UInt64) {
        guard value < mark else { return }
        let waiters = waiters.storeIfNil(Waiters())
        waiters.state.withLock(waitingUntil: { _ in
            word.bitwiseOr(1, ordering: .sequentiallyConsistent)
            return word.load(ordering: .sequentiallyConsistent) >> 1 >= mark
        }) { _ in }
    }

    /// Suspends until the value is at least `mark`.
    package func wait(until mark: UInt64) async {
        guard value < mark else { return }
        let waiters = waiters.storeIfNil(Waiters())
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDone = waiters.state.withLock { state -> Bool in
                word.bitwiseOr(1, ordering: .sequentiallyConsistent)
                if word.load(ordering: .sequentiallyConsistent) >> 1 >= mark { return true }
                state.suspended.append((mark, continuation))
                return false
            }
            if isDone { continuation.resume() }
        }
    }

    @usableFromInline
    func wake(at value: UInt64) {
        guard let waiters = waiters.load() else { return }
        let ready = waiters.state.withLockThenBroadcast { state in
            var ready: [CheckedContinuation<Void, Never>] = []
            state.suspended.removeAll { waiter in
                guard waiter.mark <= value else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    final class Waiters: Sendable {
        struct State {
            var suspended: [(mark: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        }
        let state = ConditionLock(State())
    }
}
