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
            // Advanced only under this lock: one read serves the whole step.
            switch state.schedule.quietPeriodPassed(received: receivedCommit.value) {
            case .again: return (true, nil)
            case .ended: return (false, nil)
            case .wakeHeld:
                let resume = state.wakeHeld(through: receivedCommit.value)
                if resume != nil || !state.inbox.wakes.isEmpty { state.statistics.quietCatchUps += 1 }
                return (false, resume)
            }
        }
        if let resume { resume.0.resume(returning: resume.1) }
        return again
    }
}
