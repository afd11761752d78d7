import DeliveryKit
import TetherConcurrency

/// A result computed while every observer of its query is busy is staged in their lanes (see ``QuerySchedule``): the
/// observer's signal takes it there and then, with no hop through the engine's consumer — the same moment at which
/// GRDB's `bufferingNewest(1)` consumer finds its buffered value, but never an out-of-date one.
extension LiveQueryEngine {
    /// The check `registration`'s lane makes at its observer's signal when a result waits in it: the result is
    /// delivered only if it is still the latest (``QuerySchedule/isStagedCurrent(_:for:received:applied:at:)``).
    /// Under the lane's lock, it takes the engine's: the engine never takes a lane's lock under its own. An engine
    /// gone lets the lane deliver what waits.
    static func checkStagedResults(of registration: Registration) {
        // The registration, weakly, holds all the check needs: a closure context of one reference.
        registration.lane.checkWaitingAtSignal { [weak registration] snapshot in
            guard let registration, let engine = registration.engine else { return true }
            let now = engine.moment
            return engine.state.withLock { state in
                let applied = state.catchUp.applied
                return state.withEvaluation(of: registration.query) { evaluation in
                    evaluation.schedule.isStagedCurrent(
                        snapshot, for: ObjectIdentifier(registration), received: engine.receivedCommit.value,
                        applied: applied, at: now)
                } ?? true
            }
        }
    }
}
