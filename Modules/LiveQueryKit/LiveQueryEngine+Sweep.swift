import TetherClock
import TetherConcurrency

/// Releasing observers whose owners died.
///
/// An observer's owners are checked at the moment its handler would run, so an observer whose owners died is never
/// called. Releasing it — unregistering it, and ending its query's evaluation when it was the last — is the sweep's
/// work, and it goes round the observer table: each round checks up to ``LiveQueryEngine/sweepPerRound`` observers,
/// so a round costs the same with 10,000 observers as with 100, and while commits keep coming the table is gone
/// round once every (observers ÷ 128) commits. Once the writer has paused for ``LiveQueryEngine/sweepQuietPeriod``,
/// rounds that only sweep check the rest of the table: owners that died just before the last commit are released
/// without waiting for another. (Rounds that only sweep used to start right after every commit; with 10,000
/// observers and a writer at 1,000 commits/s they took a third of a processor.)
enum SweepWatch: Sendable {
    /// No watch: the table has been gone round since the last commit, or one round checks all of it.
    case idle
    /// Waiting for the writer to pause: it had committed up to `since` when the current period began.
    case watching(since: UInt64)
    /// The writer paused: rounds that only sweep run until the table has been gone round
    /// (``LiveQueryEngine/State/sweepDebt``).
    case sweeping
}

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
            case .sweep:
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
