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

    /// Records what a round's sweep left unchecked (`unvisited`, after changes) or checked (without). Returns whether
    /// a watch for the writer's pause should start now, and marks it running. Under the lock.
    func noteSweep(unvisited: Int, afterChanges: Bool, _ state: inout State) -> Bool {
        guard afterChanges else {
            state.sweepDebt = max(0, state.sweepDebt - Self.sweepPerRound)
            if state.sweepDebt == 0, case .sweeping = state.sweepWatch { state.sweepWatch = .idle }
            return false
        }
        // Every entry this round did not look at is to be looked at once the writer pauses.
        state.sweepDebt = unvisited
        switch state.sweepWatch {
        case .watching:
            return false  // the period under way finds this commit, and watches another
        case .idle, .sweeping:
            guard unvisited > 0 else {
                state.sweepWatch = .idle
                return false
            }
            state.sweepWatch = .watching(since: receivedCommit.value)
            return true
        }
    }

    /// Whether the consumer, with nothing else to do, runs a round that only sweeps. Under the lock.
    static func owesSweep(_ state: State) -> Bool {
        guard state.sweepDebt > 0, case .sweeping = state.sweepWatch else { return false }
        return true
    }

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
            guard case .watching(let since) = state.sweepWatch else { return (false, nil) }
            // Advanced only under this lock: one read serves the whole step.
            let received = receivedCommit.value
            if received > since {
                state.sweepWatch = .watching(since: received)
                return (true, nil)
            }
            guard state.sweepDebt > 0 else {
                state.sweepWatch = .idle
                return (false, nil)
            }
            state.sweepWatch = .sweeping
            // A consumer that waits has nothing else in its inbox, or only commits kept while every query is held
            // back (``nextWork(in:)`` leaves those there); one that runs takes its sweep after its round.
            guard let consumer = state.inbox.waiting.take() else { return (false, nil) }
            state.isRunningOwedWork = false
            return (false, consumer)
        }
        consumer?.resume(returning: EngineInbox.Work())
        return again
    }
}
