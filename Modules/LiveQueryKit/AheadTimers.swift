import DocumentStoreKit
import TetherClock

/// The computations ahead of a signal that are scheduled and have not run (see `LiveQueryEngine+Ahead`), earliest due
/// last.
///
/// A writer still committing when a computation comes due leaves the result to the signal, and the timer that woke
/// to find that out cost a thread wake-up per delivery for nothing — in the slow-consumer benchmark, a point or two
/// of the writer's time. The timer would find the writer committing if a commit came within the writer's window
/// before the due time (``LiveQueryEngine/WriterPace``) or after it. So the writer's thread, which reads the clock at
/// each commit anyway, takes every computation that a commit makes certain to be left to the signal
/// (``takeDue(at:received:)``) and cancels its timer before it fires: a busy writer's deliveries cost the timer no
/// wake-up, and a writer that has stopped commits nothing to cancel it.
struct AheadTimers: Sendable {
    struct Entry: Sendable {
        let query: DocumentQuery
        /// When it is due, on the time source's `elapsed`.
        let due: Duration
        /// Tells this scheduling from a later one of the same query.
        let serial: UInt64
        /// The writer's pace since it was scheduled: how recent a commit must be, at the due time, for the writer to
        /// be taken as still committing.
        let pace: LiveQueryEngine.WriterPace
        /// The timer's call, once scheduled.
        var call: ScheduledCall?
    }

    /// Latest due first, so that the ones due are taken from the end.
    private var entries: [Entry] = []
    private var serial: UInt64 = 0

    /// From when a commit may take the earliest computation, if one is scheduled: the widest window before its due
    /// time.
    var earliestTakeable: Duration? { entries.last.map { $0.due - LiveQueryEngine.widestWriterActiveWindow } }

    /// Adds a computation of `query` due at `due`, in place of one already scheduled for it (whose call is returned,
    /// to be cancelled); returns the new one's serial.
    mutating func add(
        _ query: DocumentQuery, due: Duration, pace: LiveQueryEngine.WriterPace
    ) -> (serial: UInt64, replaced: ScheduledCall?) {
        var replaced: ScheduledCall?
        if let index = entries.firstIndex(where: { $0.query == query }) { replaced = entries.remove(at: index).call }
        serial += 1
        let entry = Entry(query: query, due: due, serial: serial, pace: pace)
        let index = entries.lastIndex { $0.due >= due }.map { $0 + 1 } ?? 0
        entries.insert(entry, at: index)
        return (serial, replaced)
    }

    /// Notes the timer's call of the computation `serial`; false when it is no longer scheduled — it ran, or a commit
    /// took it before the call was noted, and the caller cancels the call.
    mutating func attach(_ call: ScheduledCall, to serial: UInt64) -> Bool {
        guard let index = entries.lastIndex(where: { $0.serial == serial }) else { return false }
        entries[index].call = call
        return true
    }

    /// Takes the computation `serial` as its timer runs; false when a commit took it first (or a later scheduling
    /// replaced it).
    mutating func take(_ serial: UInt64) -> Bool {
        guard let index = entries.lastIndex(where: { $0.serial == serial }) else { return false }
        entries.remove(at: index)
        return true
    }

    /// Takes every computation that a commit received at `now`, the writer's `received`-th, leaves to the signal:
    /// due within the writer's window from now (``LiveQueryEngine/WriterPace/activeWindow(received:)``), or past due.
    mutating func takeDue(at now: Duration, received: UInt64) -> [Entry] {
        var taken: [Entry] = []
        var index = entries.count
        // Strictly within the window, as the timer decides: a commit exactly one window before the due time leaves
        // the computation to the timer.
        while index > 0, entries[index - 1].due - LiveQueryEngine.widestWriterActiveWindow < now {
            index -= 1
            let entry = entries[index]
            if entry.due - entry.pace.activeWindow(received: received) < now {
                taken.append(entries.remove(at: index))
            }
        }
        return taken
    }
}
