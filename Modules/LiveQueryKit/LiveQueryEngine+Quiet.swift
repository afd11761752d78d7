import TetherClock
import TetherConcurrency

/// Computing held-back results once the writer is quiet.
///
/// A query whose every observer is busy has its changes held back: nothing is computed per commit (see
/// ``LiveQueryEngine/hold(_:_:counting:schedulingAhead:in:)``). Left at that, the result would be computed when an
/// observer signals, and the observer would wait for that computation. Instead, once no commit has come for the quiet
/// period, the engine brings the held-back queries up to date — once for the whole burst — so that an observer
/// signalling afterwards takes the latest result at once. While commits keep coming the watch wakes once per period and
/// computes nothing; a writer that commits less often than the period costs one computation per commit, as if nothing
/// were held back. Off unless the store is given a quiet period.
enum QuietWatch: Sendable {
    /// No watch: nothing is held back, or a watch has just ended.
    case idle
    /// Watching: the writer had committed up to `since` when the current quiet period began.
    case watching(since: UInt64)
}

extension LiveQueryEngine {
    /// Whether a quiet watch should start now: something is held back (changes held for a query, or commits kept
    /// while every query is held back) and none runs. Marks it running. Under the lock.
    func startsQuietWatch(_ state: inout State) -> Bool {
        let isHolding = state.hasHeld || state.hasKeptCommits
        guard quietPeriod != nil, isHolding, case .idle = state.quietWatch else { return false }
        state.quietWatch = .watching(since: receivedCommit.value)
        return true
    }

    /// Waits out quiet periods until one passes without a commit, then wakes every held-back query. Holds the engine
    /// only while it checks: an engine released meanwhile ends the watch.
    func watchForQuiet() {
        guard let quietPeriod else { return }
        Task(executorPreference: executor) { [weak self, timeSource] in
            while true {
                do { try await timeSource.sleep(for: quietPeriod) } catch { return }
                guard let engine = self, engine.quietPeriodPassed() else { return }
            }
        }
    }

    /// A quiet period has passed: returns true to watch another one (commits came meanwhile), or ends the watch and
    /// wakes the held-back queries.
    func quietPeriodPassed() -> Bool {
        let (again, resume) = state.withLock { state -> (Bool, (EngineInbox.Consumer, EngineInbox.Work)?) in
            guard case .watching(let since) = state.quietWatch else { return (false, nil) }
            // Advanced only under this lock: one read serves the whole step.
            let received = receivedCommit.value
            if received > since {
                state.quietWatch = .watching(since: received)
                return (true, nil)
            }
            state.quietWatch = .idle
            let resume = state.wakeHeld(through: received)
            if resume != nil || !state.inbox.wakes.isEmpty { state.statistics.quietCatchUps += 1 }
            return (false, resume)
        }
        if let resume { resume.0.resume(returning: resume.1) }
        return again
    }
}
