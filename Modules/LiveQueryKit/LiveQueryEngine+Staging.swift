import DeliveryKit
import TetherConcurrency

/// A result computed while every observer of its query is busy is staged in their lanes (see ``PublishedResult``):
/// the observer's signal takes it there and then, with no turn of the engine's lock and no hop through it — the
/// same moment at which GRDB's `bufferingNewest(1)` consumer finds its buffered value, but never an out-of-date one.
extension LiveQueryEngine {
    /// Gives `registration`'s lane the check it makes at its observer's signal when a result waits in it: the result is
    /// delivered only if it is still the latest (``PublishedResult/isStagedCurrent(_:for:received:applied:)``). The
    /// check holds neither the engine nor the published result: a lane outliving both delivers what waits.
    func checkStagedResults(of registration: Registration, against published: PublishedResult) {
        let id = ObjectIdentifier(registration)
        registration.lane.checkWaitingAtSignal { [weak published, receivedCommit, appliedCommit] snapshot in
            guard let published else { return true }
            return published.isStagedCurrent(
                snapshot, for: id, received: receivedCommit.value, applied: appliedCommit.value)
        }
    }
}
