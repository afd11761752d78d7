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

    /// A writer that committed this recently is taken to be still committing — at least.
    ///
    /// About the time one computation of a result takes: a commit is then likely to land after it, before the signal,
    /// and the signal would compute the result again — the observer waiting for it — while the one computed ahead
    /// only cost the writer's core. A burst that ends within the window before the computation was due leaves its
    /// final result to the signal, as a burst ending after the computation already did. A writer that commits less
    /// often widens the window (``WriterPace``).
    static let writerActiveWindow = Duration.microseconds(200)

    /// The widest the window gets: the longest a computation is made ahead of the signal (``SignalPace``).
    static let widestWriterActiveWindow = SignalPace.maximumLead

    /// How often the writer committed between the scheduling of a computation ahead and its time: the commits
    /// received since, over the delay.
    struct WriterPace: Sendable {
        /// The last commit received when the computation was scheduled.
        let since: UInt64
        /// The delay it was scheduled after.
        let over: Duration

        /// How recently the writer must have committed to be taken as still committing, once `received` is the last
        /// commit received: twice its mean interval between commits over the delay, from ``writerActiveWindow`` to
        /// ``widestWriterActiveWindow``. On a slower machine a writer committing back to back every 260 µs found the
        /// 200 µs window open at about one computation in three, and each such computation was made again at the
        /// signal (Docs/LiveQueryBenchmarkLog.md, "One wake-up per computation ahead").
        func activeWindow(received: UInt64) -> Duration {
            guard received > since else { return writerActiveWindow }
            let interval = over / Int(min(received - since, UInt64(Int.max)))
            return min(max(writerActiveWindow, interval * 2), widestWriterActiveWindow)
        }
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
