import TetherClock
import TetherConcurrency

/// The quiet watch's machinery: a task on the engine's queue that sleeps a quiet period at a time on the store's clock
/// (the policy: ``QuietWatch``, ``LiveQuerySchedule/quietPeriodPassed(received:)``).
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
            case .paused:
                let resume = state.wakeHeld(through: receivedCommit.value)
                if resume != nil || !state.inbox.wakes.isEmpty { state.statistics.quietCatchUps += 1 }
                return (false, resume)
            }
        }
        if let resume { resume.0.resume(returning: resume.1) }
        return again
    }
}
