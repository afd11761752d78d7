import TetherConcurrency

/// A counting semaphore whose waiters are suspended, never blocking a thread; served in order.
final class AsyncSlots: Sendable {
    private struct State: Sendable {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: LockedValue<State>

    init(count: Int) {
        state = LockedValue(State(free: count))
    }

    /// How many wait for a slot.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Takes a slot, waiting for one if none is free.
    func acquire() async {
        await state.admitOrQueue(\.waiting) { state in
            guard state.free > 0 else { return false }
            state.free -= 1
            return true
        } entry: {
            $0
        }
    }

    /// Gives a slot back, to the longest waiter if there is one.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
