import DocumentStoreKit
import TetherClock
import TetherConcurrency

/// Running failed queries again after a wait (see ``EvaluationRetry``).
///
/// A failure schedules one retry per query (`QuerySchedule.retryTimer`): a timer on the store's clock
/// (``TetherClock/TimeSource/schedule(after:_:)``), holding the engine only weakly, puts the query into the inbox once
/// the policy's delay has passed; the consumer's next round runs
/// it again if it is still failing and observed — a commit in the meantime may already have run it. Another failure
/// schedules the next retry, with a longer delay; a success ends the streak.
extension LiveQueryEngine {
    /// Records a failure of the query in its streak and returns the delay of the retry to schedule, if one is to be.
    /// Under the lock.
    func schedulesRetry(in schedule: inout QuerySchedule) -> Duration? {
        schedule.failed(retry: retry)
    }

    /// Once `delay` has passed, hands `query` to the consumer to be run again.
    func retry(_ query: DocumentQuery, after delay: Duration) {
        after(delay) { $0.retryIsDue(query) }
    }

    /// A retry's wait is over: the query goes into the next round, if it is still observed.
    func retryIsDue(_ query: DocumentQuery) {
        let resume = state.withLock { state -> (EngineInbox.Consumer, EngineInbox.Work)? in
            guard state.withEvaluation(of: query, { $0.schedule.retryTimer = .none }) != nil else { return nil }
            state.schedule.wake()
            return state.handedOver(state.inbox.retry(query))
        }
        if let resume { resume.0.resume(returning: resume.1) }
    }

    /// In a round: runs `query` again if it is still failing (a commit since may have run it already).
    func runRetry(_ query: DocumentQuery) async {
        let isFailing = state.withLock { state in
            guard state.evaluations[query]?.schedule.isFailing == true else { return false }
            state.statistics.retries += 1
            return true
        }
        if isFailing { await evaluate(query) }
    }
}
