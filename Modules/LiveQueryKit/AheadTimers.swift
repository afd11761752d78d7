import DocumentStoreKit
import TetherClock

/// The computations ahead of a signal that are scheduled and have not run (see `LiveQueryEngine+Ahead`), earliest due
/// last.
///
/// A writer still committing when a computation comes due leaves the result to the signal, and the timer that woke
/// to find that out cost a thread wake-up per delivery for nothing — in the slow-consumer benchmark, a point or two
/// of the writer's time. So the writer's thread, which reads the clock at each commit anyway, takes every computation
/// a commit finds due (``takeDue(at:)``) and cancels its timer before it fires: a busy writer's deliveries cost the
/// timer no wake-up, and a writer that has stopped commits nothing to cancel it.
struct AheadTimers: Sendable {
    struct Entry: Sendable {
        let query: DocumentQuery
        /// When it is due, on the time source's `elapsed`.
        let due: Duration
        /// Tells this scheduling from a later one of the same query.
        let serial: UInt64
        /// The timer's call, once scheduled.
        var call: ScheduledCall?
    }

    /// Latest due first, so that the ones due are taken from the end.
    private var entries: [Entry] = []
    private var serial: UInt64 = 0

    /// When the earliest computation is due, if one is scheduled.
    var earliestDue: Duration? { entries.last?.due }

    /// How many are scheduled.
    var count: Int { entries.count }

    /// Adds a computation of `query` due at `due`, in place of one already scheduled for it (whose call is returned,
    /// to be cancelled); returns the new one's serial.
    mutating func add(_ query: DocumentQuery, due: Duration) -> (serial: UInt64, replaced: ScheduledCall?) {
        var replaced: ScheduledCall?
        if let index = entries.firstIndex(where: { $0.query == query }) { replaced = entries.remove(at: index).call }
        serial += 1
        let entry = Entry(query: query, due: due, serial: serial)
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

    /// Takes every computation due at `now`.
    mutating func takeDue(at now: Duration) -> [Entry] {
        var due: [Entry] = []
        while let last = entries.last, last.due <= now { due.append(entries.removeLast()) }
        return due
    }
}
