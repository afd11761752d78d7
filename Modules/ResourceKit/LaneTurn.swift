import TetherConcurrency

/// One durable mutation's turn in its lane. The next mutation of the lane waits for ``over``: when the mutation's
/// work has returned — or, when its request completed (a cancellation) before the work began, at once. A turn never
/// ends while its work can still send, so a cancelled mutation in the middle of a lane never lets the one after it
/// overtake the one before.
final class LaneTurn: Sendable {
    private enum Phase {
        case waiting, running, over
    }

    private let phase = LockedValue(Phase.waiting)
    /// Fired once the turn is over.
    let over = OneShot<Void>()

    /// Called as the work begins: false when the turn is over already (the request completed first), and the work
    /// must send nothing.
    func begin() -> Bool {
        phase.withLock { phase in
            guard case .waiting = phase else { return false }
            phase = .running
            return true
        }
    }

    /// Called as the work returns.
    func end() {
        phase.withLock { $0 = .over }
        over.fire()
    }

    /// Called when the request completes: ends the turn if the work never began.
    func requestCompleted() {
        let ended = phase.withLock { phase -> Bool in
            guard case .waiting = phase else { return false }
            phase = .over
            return true
        }
        if ended { over.fire() }
    }
}
