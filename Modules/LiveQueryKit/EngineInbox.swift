import DocumentStoreKit

/// What the engine's consumer has yet to do: the changes committed since it last looked (``PendingChanges``: the
/// writer appends, or merges while every query is held back, the consumer merges the rest, and past a bound the sets
/// fold into one — so a fast writer costs a bounded list, never a queue), the observers registered since, the queries whose held-back changes an observer is now ready
/// for, and the failed queries whose retry is due. The consumer takes everything at once, or waits here while there
/// is nothing.
struct EngineInbox: Sendable {
    /// One round of work.
    struct Work: Sendable {
        /// The changes, still to be merged (``PendingChanges/merged()``, by the consumer, outside the lock).
        var changes = PendingChanges()
        var registrations: [Registration] = []
        /// Queries with changes held back while their observers were busy, one of which is now ready.
        var wakes: Set<DocumentQuery> = []
        /// Failed queries whose retry is due.
        var retries: Set<DocumentQuery> = []

        /// Whether a check for dead owners found one while every query was held back, and this round is to release it
        /// (``LiveQueryEngine/State/isSweepDue``).
        var isSweepDue = false

        /// Whether catching up waits for this round: it starts observers or brings held-back queries up to date.
        var isOwed: Bool { !registrations.isEmpty || !wakes.isEmpty }

        /// Whether the round only starts new observers: no changes, no query to wake or run again, no sweep due.
        var onlyStarts: Bool {
            changes.isEmpty && wakes.isEmpty && retries.isEmpty && !registrations.isEmpty && !isSweepDue
        }
    }

    typealias Consumer = CheckedContinuation<Work?, Never>

    var changes = PendingChanges()
    var registrations: [Registration] = []
    var wakes: Set<DocumentQuery> = []
    var retries: Set<DocumentQuery> = []
    /// The consumer, suspended until there is work (or none will come: it is resumed with nil).
    var waiting: Consumer?

    /// Adds one commit's changes; returns the waiting consumer with its work, to resume outside the lock.
    mutating func add(_ set: ChangeSet) -> (Consumer, Work)? {
        changes.append(set)
        return handOver()
    }

    /// Keeps one commit's changes without waking the consumer (every query is held back: nothing to compute), merged
    /// into those kept before it (``PendingChanges/keep(_:)``).
    mutating func keep(_ set: ChangeSet) {
        changes.keep(set)
    }

    /// Adds a new observer, to be started by the consumer; returns the waiting consumer with its work.
    mutating func add(_ registration: Registration) -> (Consumer, Work)? {
        registrations.append(registration)
        return handOver()
    }

    /// Adds queries to bring up to date from the changes held back for them; returns the waiting consumer with its
    /// work.
    mutating func wake(_ queries: some Sequence<DocumentQuery>) -> (Consumer, Work)? {
        wakes.formUnion(queries)
        return handOver()
    }

    /// Adds a failed query to run again; returns the waiting consumer with its work.
    mutating func retry(_ query: DocumentQuery) -> (Consumer, Work)? {
        retries.insert(query)
        return handOver()
    }

    /// Forgets an observer that ended before the consumer started it.
    mutating func remove(_ registration: Registration) {
        registrations.removeAll { $0 === registration }
    }

    /// Everything waiting, or nil when nothing is.
    mutating func take() -> Work? {
        guard !changes.isEmpty || !registrations.isEmpty || !wakes.isEmpty || !retries.isEmpty else { return nil }
        defer {
            changes = PendingChanges()
            registrations.removeAll()
            wakes.removeAll()
            retries.removeAll()
        }
        return Work(changes: changes, registrations: registrations, wakes: wakes, retries: retries)
    }

    /// Whether an observer waits to be started.
    var hasRegistrations: Bool { !registrations.isEmpty }

    /// Whether nothing but commits' changes waits: no observer to start, no query to wake or run again.
    var holdsOnlyChanges: Bool { registrations.isEmpty && wakes.isEmpty && retries.isEmpty }

    /// Whether an observer waits to be started or a query to be woken: work that catching up waits for.
    var hasOwedWork: Bool { !registrations.isEmpty || !wakes.isEmpty }

    /// The waiting consumer with everything there is, if it waits and there is anything (changes kept while every
    /// query was held back, say).
    mutating func resumeIfWaiting() -> (Consumer, Work)? {
        handOver()
    }

    /// The waiting consumer with everything there is; nil — the consumer left waiting — when either is missing.
    private mutating func handOver() -> (Consumer, Work)? {
        guard waiting != nil, let work = take(), let consumer = waiting.take() else { return nil }
        return (consumer, work)
    }
}
