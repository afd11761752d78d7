import TetherConcurrency

/// One durable mutation's turn in its lane. Its request is started only when the turn before it is over, so that a
/// mutation waiting its turn holds no task; and its own turn is over when its work has returned — or, when its request
/// completed first (a cancellation), once the turn before it is over too. A cancelled mutation in the middle of a
/// lane never lets the one after it overtake the one before.
final class LaneTurn: Sendable {
    private enum Phase {
        /// The turn before is not over.
        case waiting
        /// The work may begin.
        case ready
        case running
        case over
    }

    private struct State {
        var phase: Phase
        var requestCompleted = false
        /// Called once the turn is over: starts the next mutation of the lane.
        var follower: (@Sendable () -> Void)?
    }

    private let state: LockedValue<State>

    /// A turn that waits for another (`waits`), or may begin at once.
    init(waits: Bool) {
        state = LockedValue(State(phase: waits ? .waiting : .ready))
    }

    /// Whether the turn is over: the next in its lane may begin.
    var isOver: Bool {
        state.withLock { state in
            if case .over = state.phase { return true }
            return false
        }
    }

    /// Calls `follower` once this turn is over: now, if it is.
    func whenOver(_ follower: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard case .over = state.phase else {
                state.follower = follower
                return false
            }
            return true
        }
        if now { follower() }
    }

    /// The turn before is over: the work may begin, unless the request has completed, which ends this turn too.
    /// Returns whether the work should be started.
    func previousEnded() -> Bool {
        let (start, follower) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            guard case .waiting = state.phase else { return (false, nil) }
            if state.requestCompleted {
                state.phase = .over
                return (false, state.follower.take())
            }
            state.phase = .ready
            return (true, nil)
        }
        follower?()
        return start
    }

    /// Called as the work begins: false when the turn is over already (the request completed first), and the work
    /// must send nothing.
    func begin() -> Bool {
        state.withLock { state in
            guard case .ready = state.phase else { return false }
            state.phase = .running
            return true
        }
    }

    /// Called as the work returns.
    func end() {
        let follower = state.withLock { state -> (@Sendable () -> Void)? in
            state.phase = .over
            return state.follower.take()
        }
        follower?()
    }

    /// Called when the request completes: ends the turn if its work never began and the turn before is over.
    func requestCompleted() {
        let follower = state.withLock { state -> (@Sendable () -> Void)?? in
            state.requestCompleted = true
            guard case .ready = state.phase else { return nil }
            state.phase = .over
            return .some(state.follower.take())
        }
        if let follower { follower?() }
    }
}
