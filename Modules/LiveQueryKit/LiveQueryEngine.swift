import DeliveryKit
import Logging
import OwnershipKit
import PersistenceKit
import TetherConcurrency

/// What a lane carries to one observer: a result, compared by value so that an unchanged one is not delivered, or
/// why the query could not be evaluated.
enum Snapshot: Sendable, Equatable {
    case documents([Document])
    case failure(EvaluationFailure)
}

/// A failed evaluation, as observers receive it. Each failure is delivered: two are never "unchanged".
struct EvaluationFailure: Sendable, Equatable {
    let error: any Error
    let serial: UInt64

    static func == (lhs: EvaluationFailure, rhs: EvaluationFailure) -> Bool { lhs.serial == rhs.serial }
}

/// Counts that show how much work live queries cost.
public struct LiveQueryStatistics: Sendable, Hashable {
    /// Queries run against the store (initial results and re-evaluations).
    public var evaluations = 0
    /// Results brought up to date from the changed documents alone, without running the query.
    public var incrementalUpdates = 0
    /// Commits' changes that touched an observed collection but could not affect a query's result, so it was not
    /// run again.
    public var skippedIrrelevant = 0
    /// Observers registered now.
    public var observers = 0
    /// Distinct queries observed now (identical queries share one evaluation).
    public var queries = 0
    /// Evaluations that failed (each delivered to the query's observers' `onError:`).
    public var failures = 0
}

/// Evaluates observed queries after each commit and hands snapshots to their observers' lanes.
///
/// All evaluation runs in one drain at a time (a task started when work arrives and none is running), so results
/// are computed in commit order. Changes that arrive while it runs are merged into one pending set: a fast writer
/// costs one pending set, not a queue.
final class LiveQueryEngine: Sendable {
    struct Evaluation: Sendable {
        var documents: [Document] = []
        var ids: Set<String> = []
        var isEvaluated = false
        /// The last evaluation failed: the next commit runs the query again (the last good result stays).
        var isFailing = false
        /// The commit the result reflects.
        var commit: UInt64 = 0
        var registrations: [ObjectIdentifier: Registration] = [:]
    }

    struct State: Sendable {
        var evaluations: [DocumentQuery: Evaluation] = [:]
        var pendingChanges: ChangeSet?
        var pendingRegistrations: [Registration] = []
        var isDraining = false
        /// Every registration not yet unregistered: the feed subscription lives while this is not empty.
        var registered: Set<ObjectIdentifier> = []
        var subscription: ChangeSubscription?
        var statistics = LiveQueryStatistics()
        var failureSerial: UInt64 = 0
    }

    /// Above this many changed documents in one collection, the query is simply run again: reading that many
    /// documents by `_id` costs about what one query over a 10,000-document collection does.
    static let relevanceCheckLimit = 512

    let documents: any DocumentStore
    let logger: Logger
    let state = LockedValue(State())
    /// Every observer, with its owner: OwnershipKit's rules, the same as a resource's observers.
    let observers = ObserverTable<Registration, Never>(deliver: Registration.deliver)

    init(documents: any DocumentStore, logger: Logger) {
        self.documents = documents
        self.logger = logger
        LifetimeTracking.made(self, "live-query engine")
    }

    var statistics: LiveQueryStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.queries = state.evaluations.count
            statistics.observers = state.evaluations.values.reduce(0) { $0 + $1.registrations.count }
            return statistics
        }
    }

    // MARK: Registering

    func register(_ registration: Registration) {
        let subscribe = state.withLock { state -> Bool in
            // Ended before it got here (its owner died at once): unregister found nothing to remove.
            guard !registration.stopped.withLock({ $0 }) else { return false }
            state.registered.insert(ObjectIdentifier(registration))
            state.pendingRegistrations.append(registration)
            return state.subscription == nil
        }
        if subscribe {
            // One feed subscription per store, while anything is observed.
            let subscription = documents.changes.subscribe { [weak self] changes in self?.enqueue(changes) }
            let surplus = state.withLock { state -> ChangeSubscription? in
                if state.subscription == nil {
                    state.subscription = subscription
                    return nil
                }
                return subscription
            }
            surplus?.cancel()
        }
        scheduleDrain()
    }

    /// Removes an observer (idempotent); the last one out ends the feed subscription.
    func unregister(_ registration: Registration) {
        registration.stopped.withLock { $0 = true }
        registration.lane.cancel()
        let released = state.withLock { state -> (Evaluation?, ChangeSubscription?)? in
            guard state.registered.remove(ObjectIdentifier(registration)) != nil else { return nil }
            state.pendingRegistrations.removeAll { $0 === registration }
            var removed: Evaluation?
            if var evaluation = state.evaluations[registration.query] {
                evaluation.registrations[ObjectIdentifier(registration)] = nil
                if evaluation.registrations.isEmpty {
                    removed = state.evaluations.removeValue(forKey: registration.query)
                } else {
                    state.evaluations[registration.query] = evaluation
                }
            }
            return (removed, state.registered.isEmpty ? state.subscription.take() : nil)
        }
        // The evaluation's documents and the subscription are released here, outside the lock.
        released?.1?.cancel()
        withExtendedLifetime(released) {}
    }

    // MARK: The drain

    func enqueue(_ changes: ChangeSet) {
        state.withLock { state in
            if state.pendingChanges == nil { state.pendingChanges = changes } else { state.pendingChanges!.merge(changes) }
        }
        scheduleDrain()
    }

    func scheduleDrain() {
        let start = state.withLock { state -> Bool in
            guard !state.isDraining else { return false }
            state.isDraining = true
            return true
        }
        if start { Task { await drain() } }
    }

    func drain() async {
        while let (changes, registrations) = state.withLock({ state -> (ChangeSet?, [Registration])? in
            guard state.pendingChanges != nil || !state.pendingRegistrations.isEmpty else {
                state.isDraining = false
                return nil
            }
            defer { state.pendingRegistrations.removeAll() }
            return (state.pendingChanges.take(), state.pendingRegistrations)
        }) {
            sweep()
            if let changes { await apply(changes) }
            for registration in registrations where !registration.isGone { await start(registration) }
            // Each round gives Swift concurrency's thread back: over a store whose reads never suspend (in memory),
            // a drain fed without pause held the thread for as long as work kept coming — under ThreadSanitizer,
            // two such drains held both of a 2-core machine's threads, and writers and other tasks made no progress.
            await Task.yield()
        }
    }

    /// Ends observers whose owners are gone; their stopped notices unregister them.
    func sweep() {
        observers.sweep()
    }

    /// A new observer: the current result at once if its query is already evaluated, else after evaluating it.
    func start(_ registration: Registration) async {
        let known = state.withLock { state -> [Document]?? in
            // Stopped while it waited: unregister has run, or will find nothing to remove.
            guard state.registered.contains(ObjectIdentifier(registration)), !registration.stopped.withLock({ $0 }) else {
                return .some(nil)
            }
            var evaluation = state.evaluations[registration.query] ?? Evaluation()
            evaluation.registrations[ObjectIdentifier(registration)] = registration
            state.evaluations[registration.query] = evaluation
            return evaluation.isEvaluated ? .some(evaluation.documents) : nil
        }
        switch known {
        case .some(.some(let documents)): registration.lane.submit(.documents(documents))
        case .some(.none): break
        case .none: await evaluate(registration.query)
        }
    }

    /// After a commit: brings up to date only the queries the changes can affect — from the changed documents alone
    /// when that is exact, by running the query otherwise.
    func apply(_ changes: ChangeSet) async {
        let collections = changes.collections
        let candidates = state.withLock { state in
            // Results in other collections stay exact through these commits.
            for (query, evaluation) in state.evaluations
            where !collections.contains(query.collection) && changes.commits.lowerBound <= evaluation.commit + 1 {
                state.evaluations[query]?.commit = max(evaluation.commit, changes.commits.upperBound)
            }
            return state.evaluations.filter {
                collections.contains($0.key.collection) && ($0.value.isEvaluated || $0.value.isFailing)
            }
            .map { ($0.key, $0.value) }
        }
        for (query, evaluation) in candidates {
            // A failing query is run again at each commit that touches its collection, until it succeeds.
            let refreshed = evaluation.isFailing ? .rerun : await refresh(query, evaluation, changes: changes)
            switch refreshed {
            case .irrelevant(let commit):
                state.withLock { state in
                    state.statistics.skippedIrrelevant += 1
                    // Still exact at this commit, if the read saw no later one.
                    if let commit, let known = state.evaluations[query]?.commit {
                        state.evaluations[query]?.commit = max(known, commit)
                    }
                }
            case .incremental(let documents, let commit):
                publish(documents, commit: commit, for: query, incremental: true)
            case .rerun:
                await evaluate(query)
            }
        }
    }

    enum Refresh {
        /// The changes cannot alter the result, which is exact at `commit` when that is known.
        case irrelevant(commit: UInt64?)
        /// The result at `commit`, computed from the changed documents.
        case incremental([Document], commit: UInt64)
        /// Run the query.
        case rerun
    }

    /// Decides how the changes reach the query's result. The changed documents are read with the read's commit
    /// number: when it is the change set's last commit, and the result is no older than the set's first commit,
    /// applying the changed documents to the result gives exactly the query's result at that commit.
    func refresh(_ query: DocumentQuery, _ evaluation: Evaluation, changes: ChangeSet) async -> Refresh {
        let changed = changes.changes(in: query.collection)
        guard changed.count <= Self.relevanceCheckLimit else { return .rerun }
        let read: (commit: UInt64, documents: [String: StoredDocument])
        do {
            read = try await documents.read { reader in
                var found: [String: StoredDocument] = [:]
                for (id, kind) in changed where kind != .removed {
                    if let document = try reader.document(id: id, in: query.collection) { found[id] = document }
                }
                return (try reader.commitNumber(), found)
            }
        } catch {
            logger.debug(
                "live query: could not read changed documents; running the query again",
                metadata: ["error": "\(error)"])
            return .rerun
        }
        let wasIn = changed.keys.contains(where: evaluation.ids.contains)
        let matchesNow = read.documents.values.contains { query.predicate.matches($0.body) }
        guard wasIn || matchesNow else {
            // The result stays right through these commits for every document they touched, except any that
            // changed again later — and those are in a later change set, to be taken from their current state.
            let contiguous = changes.commits.lowerBound <= evaluation.commit + 1
            return .irrelevant(commit: contiguous ? changes.commits.upperBound : nil)
        }
        guard read.commit == changes.commits.upperBound, changes.commits.lowerBound <= evaluation.commit + 1,
            query.offset == 0,
            let documents = Self.merge(changed.keys, read.documents, into: evaluation.documents, query: query)
        else { return .rerun }
        return .incremental(documents, commit: read.commit)
    }

    /// The result with each changed document taken out and, if it matches now, put back in its place; nil when
    /// that cannot be exact.
    ///
    /// Unchanged documents outside a result are either not matching or — only when the result filled its limit —
    /// sorted after its last document. So the merged list is exact up to that old last document: if at least
    /// `limit` documents sort no later than it, they are the new window; otherwise the query must refill it.
    static func merge(
        _ changed: Dictionary<String, ChangeSet.Kind>.Keys, _ current: [String: StoredDocument], into result: [Document],
        query: DocumentQuery
    ) -> [Document]? {
        let changedIDs = Set(changed)
        var merged = result.filter { !changedIDs.contains($0.id) }
        for id in changed {
            guard let stored = current[id], query.predicate.matches(stored.body) else { continue }
            merged.insert(Document(stored), at: insertionIndex(of: stored, in: merged, query: query))
        }
        guard let limit = query.limit else { return merged }
        guard limit > 0 else { return [] }
        guard result.count >= limit, let last = result.last else { return Array(merged.prefix(limit)) }
        let boundary = StoredDocument(validatedID: last.id, body: last.value)
        let known = merged.prefix { !query.areInIncreasingOrder(boundary, StoredDocument(validatedID: $0.id, body: $0.value)) }
        return known.count >= limit ? Array(merged.prefix(limit)) : nil
    }

    /// Where `document` goes in `documents`, sorted by the query's order (ties by `_id`, a total order).
    static func insertionIndex(of document: StoredDocument, in documents: [Document], query: DocumentQuery) -> Int {
        var low = 0
        var high = documents.count
        while low < high {
            let middle = (low + high) / 2
            let other = StoredDocument(validatedID: documents[middle].id, body: documents[middle].value)
            if query.areInIncreasingOrder(other, document) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Runs the query and offers the result to every observer of it (each lane skips a result equal to the last
    /// one it delivered).
    func evaluate(_ query: DocumentQuery) async {
        let result: (commit: UInt64, documents: [Document])
        do {
            result = try await documents.read { reader in
                (try reader.commitNumber(), try reader.documents(matching: query).map(Document.init))
            }
        } catch {
            // Delivered to the observers; logged at debug, as an error a library hands to its caller.
            logger.debug(
                "live query failed", metadata: ["collection": "\(query.collection)", "error": "\(error)"])
            publishFailure(error, for: query)
            return
        }
        publish(result.documents, commit: result.commit, for: query, incremental: false)
    }

    /// Records that a query failed, keeping its last good result, and offers the failure to its observers.
    func publishFailure(_ error: any Error, for query: DocumentQuery) {
        let (registrations, serial) = state.withLock { state -> ([Registration], UInt64) in
            state.statistics.failures += 1
            state.failureSerial += 1
            guard state.evaluations[query] != nil else { return ([], state.failureSerial) }
            state.evaluations[query]?.isFailing = true
            return (Array(state.evaluations[query]!.registrations.values), state.failureSerial)
        }
        let failure = Snapshot.failure(EvaluationFailure(error: error, serial: serial))
        for registration in registrations { registration.lane.submit(failure) }
    }

    /// Records a query's new result and offers it to its observers.
    func publish(_ result: [Document], commit: UInt64, for query: DocumentQuery, incremental: Bool) {
        let registrations = state.withLock { state -> [Registration] in
            if incremental { state.statistics.incrementalUpdates += 1 } else { state.statistics.evaluations += 1 }
            guard var evaluation = state.evaluations[query] else { return [] }
            evaluation.documents = result
            evaluation.ids = Set(result.map(\.id))
            evaluation.isEvaluated = true
            evaluation.isFailing = false
            evaluation.commit = commit
            state.evaluations[query] = evaluation
            return Array(evaluation.registrations.values)
        }
        let snapshot = Snapshot.documents(result)
        for registration in registrations { registration.lane.submit(snapshot) }
    }
}
