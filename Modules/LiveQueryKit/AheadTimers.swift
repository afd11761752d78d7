import DocumentStoreKit
import TetherClock

/// The computations ahead of a signal that are scheduled and have not run (see `LiveQueryEngine+Ahead`): at most one
/// per query, a later one replacing it.
struct AheadTimers: Sendable {
    struct Entry: Sendable {
        let query: DocumentQuery
        /// Tells this scheduling from a later one of the same query.
        let serial: UInt64
        /// The timer's call, once scheduled.
        var call: ScheduledCall?
    }

    private var entries: [Entry] = []
    private var serial: UInt64 = 0

    /// Adds a computation of `query`, in place of one already scheduled for it (whose call is returned, to be
    /// cancelled); returns the new one's serial.
    mutating func add(_ query: DocumentQuery) -> (serial: UInt64, replaced: ScheduledCall?) {
        var replaced: ScheduledCall?
        if let index = entries.firstIndex(where: { $0.query == query }) { replaced = entries.remove(at: index).call }
        serial += 1
        entries.append(Entry(query: query, serial: serial))
        return (serial, replaced)
    }

    /// Notes the timer's call of the computation `serial`; false when it is not scheduled now — it ran before the call
    /// was noted, and the caller cancels the call.
    mutating func attach(_ call: ScheduledCall, to serial: UInt64) -> Bool {
        guard let index = entries.lastIndex(where: { $0.serial == serial }) else { return false }
        entries[index].call = call
        return true
    }

    /// Takes the computation `serial` as its timer runs; false when a later scheduling replaced it.
    mutating func take(_ serial: UInt64) -> Bool {
        guard let index = entries.lastIndex(where: { $0.serial == serial }) else { return false }
        entries.remove(at: index)
        return true
    }
}
