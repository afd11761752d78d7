import TetherClock
import TetherConcurrency

/// The sweep watch's machinery: a task on the engine's queue that waits for the writer to pause (the policy:
/// ``SweepWatch``, ``LiveQuerySchedule/sweepPeriodPassed(received:)``).
extension LiveQueryEngine {
    /// How long the writer must pause before rounds that only sweep check the rest of the observer table.
    static let sweepQuietPeriod = Duration.milliseconds(20)

    /// Waits out quiet periods until one passes without a commit, then lets rounds that only sweep run. Holds the
    /// engine only while it checks: an engine released meanwhile ends the watch.
    func watchForSweepQuiet() {
        Task(executorPreference: executor) { [weak self, timeSource] in
            while true {
                do { try await timeSource.sleep(for: Self.sweepQuietPeriod) } catch { return }
                guard let engine = self, engine.sweepQuietPeriodPassed() else { return }
            }
        }
    }

    /// A quiet period has passed: returns true to watch another one (commits came meanwhile); otherwise ends the
    /// watch, and wakes the consumer, if it waits, for the rounds that only sweep.
    func sweepQuietPeriodPassed() -> Bool {
        let (again, consumer) = state.withLock { state -> (Bool, EngineInbox.Consumer?) in
            // Advanced only under this lock: one read serves the whole step.
            switch state.schedule.sweepPeriodPassed(received: receivedCommit.value) {
            case .again: return (true, nil)
            case .ended: return (false, nil)
            case .paused:
                // A consumer that waits has nothing else in its inbox, or only commits kept while every query is held
                // back (``nextWork(in:)`` leaves those there); one that runs takes its sweep after its round.
                guard let consumer = state.inbox.waiting.take() else { return (false, nil) }
                state.schedule.round = .owesNothing
                return (false, consumer)
            }
        }
        consumer?.resume(returning: EngineInbox.Work())
        return again
    }
}
