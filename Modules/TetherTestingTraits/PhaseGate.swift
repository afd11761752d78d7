import TetherConcurrency

/// Admits work of two kinds, never both at once: any number of one kind run together, then the other kind's turn.
/// Waiters are suspended, never blocking a thread. Turns alternate in arrival order, so neither kind starves: once a
/// waiter of the other kind is queued, no more of the running kind are admitted ahead of it.
final class PhaseGate<Kind: Hashable & Sendable>: Sendable {
    private enum Phase: Sendable {
        /// Nothing is admitted.
        case idle
        /// `count` of `kind` are admitted and not yet released.
        case running(kind: Kind, count: Int)
    }

    private struct State: Sendable {
        var phase = Phase.idle
        var waiting: [(kind: Kind, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = LockedValue(State())

    /// How many wait for their turn.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Suspends until work of `kind` may run; pair with ``leave(_:)``.
    func enter(_ kind: Kind) async {
        await state.admitOrQueue(\.waiting) { state in
            switch state.phase {
            case .idle:
                state.phase = .running(kind: kind, count: 1)
                return true
            case .running(kind, let count) where state.waiting.isEmpty:
                state.phase = .running(kind: kind, count: count + 1)
                return true
            case .running:
                return false
            }
        } entry: {
            (kind, $0)
        }
    }

    /// Ends one admitted piece of work of `kind`. The last one out hands the gate to the first waiter's kind, and
    /// admits every waiter of that kind.
    func leave(_ kind: Kind) {
        let admitted = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard case .running(let running, let count) = state.phase, running == kind, count > 0 else {
                preconditionFailure("PhaseGate.leave(\(kind)) without a matching enter")
            }
            guard count == 1 else {
                state.phase = .running(kind: kind, count: count - 1)
                return []
            }
            guard let next = state.waiting.first?.kind else {
                state.phase = .idle
                return []
            }
            let turn = state.waiting.filter { $0.kind == next }.map(\.continuation)
            state.waiting.removeAll { $0.kind == next }
            state.phase = .running(kind: next, count: turn.count)
            return turn
        }
        for continuation in admitted { continuation.resume() }
    }
}
