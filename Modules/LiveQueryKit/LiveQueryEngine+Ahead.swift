import DocumentStoreKit
import TetherClock
import TetherConcurrency

/// Computing a held-back result just before a busy observer is due to signal (see ``SignalPace``).
///
/// Without this, a query whose every observer is busy is brought up to date when one of them signals, and that
/// observer waits for the computation (about 0.2 ms for a 100-document result). The engine instead times how long
/// the observers take over a result, and a little before the next signal is due — once per delivery, not once per
/// commit — brings the query up to date, so that the signal takes the latest result at once. Commits that come after
/// that computation are held back again and applied when the observer signals, as without it. The timer is started
/// on the engine's queue by the round that hands the result out (or, for a result an observer took as it signalled,
/// by the round that first holds a commit back after it): the signal that took the result, and the writer, never
/// wait for it. It finds nothing to compute when no commit came meanwhile, and leaves the result to the signal while
/// the writer is still committing (``LiveQuerySchedule/aheadDue(serial:canWake:isWriting:now:window:)``). On unless
/// the store's configuration says `anticipatesSignals: false`.
extension LiveQueryEngine {
    /// Brings `query` up to date after `delay`, if its changes are still held back then and the writer has stopped (no
    /// write in flight, no commit within its window before then). Holds the engine only once the time has come: an
    /// engine released meanwhile computes nothing.
    func computeAhead(_ query: DocumentQuery, after delay: Duration) {
        let pace = WriterPace(since: receivedCommit.value, over: delay)
        // Noted before the timer is started, so that a call due at once finds it.
        let (serial, replaced) = state.withLock { $0.schedule.aheadTimers.add(query) }
        replaced?.cancel()
        let call = after(delay) { $0.computeAheadNow(query, serial: serial, pace: pace) }
        if !state.withLock({ $0.schedule.aheadTimers.attach(call, to: serial) }) { call.cancel() }
    }

    /// The time to compute ahead of a signal has come: wakes the query if its changes are held back (an observer
    /// that signalled meanwhile has woken it already; with no commit since the hand-out there is nothing to compute),
    /// unless the writer is still committing: a write is in flight (``WritesInFlight``), or
    /// the last commit came within the writer's window (``WriterPace/activeWindow(received:)``).
    func computeAheadNow(_ query: DocumentQuery, serial: UInt64, pace: WriterPace) {
        let now = timeSource.elapsed
        let isWriting = writes.isWriting
        let resume = state.withLock { state -> (EngineInbox.Consumer, EngineInbox.Work)? in
            // Advanced only under this lock.
            let window = pace.activeWindow(received: receivedCommit.value)
            let outcome = state.schedule.aheadDue(
                serial: serial, canWake: state.canWake(query), isWriting: isWriting, now: now, window: window)
            switch outcome {
            case .nothing:
                return nil
            case .leftToSignal(let whileWriting):
                state.statistics.aheadLeftToSignal += 1
                if whileWriting { state.statistics.aheadLeftWhileWriting += 1 }
                return nil
            case .compute:
                state.statistics.computedAhead += 1
                return state.wake(CollectionOfOne(query))
            }
        }
        if let resume { resume.0.resume(returning: resume.1) }
    }
}
