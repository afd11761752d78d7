import DeliveryKit
import Logging
import OwnershipKit
import PersistenceKit
import TetherConcurrency

/// A snapshot as a lane carries it: the documents, compared by value so that an unchanged result is not delivered.
struct Snapshot: Sendable, Equatable {
    let documents: [Document]
}

/// One observer of one query: its lane, its owner (for owner-tied observers), and whether it has stopped.
final class Registration: Sendable {
    let query: DocumentQuery
    let lane: DeliveryLane<Snapshot>
    let owner: WeakReference?
    let stopped = LockedValue(false)

    init(query: DocumentQuery, lane: DeliveryLane<Snapshot>, owner: AnyObject?) {
        self.query = query
        self.lane = lane
        self.owner = owner.map(WeakReference.init)
    }

    /// Whether the observer is gone: stopped, its lane cancelled, or its owner deallocated.
    var isGone: Bool {
        if stopped.withLock({ $0 }) || lane.isCancelled { return true }
        guard let owner else { return false }
        return owner.object == nil
    }
}

/// Counts that show how much work live queries cost.
public struct LiveQueryStatistics: Sendable, Hashable {
    /// Queries run against the store (initial results and re-evaluations).
    public var evaluations = 0
    /// Commits' changes that touched an observed collection but could not affect a query's result, so it was not
    /// run again.
    public var skippedIrrelevant = 0
    /// Observers registered now.
    public var observers = 0
    /// Distinct queries observed now (identical queries share one evaluation).
    public var queries = 0
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
    }

    /// Above this many changed documents in one collection, the query is simply run again.
    static let relevanceCheckLimit = 64

    let documents: any DocumentStore
    let logger: Logger
    let state = LockedValue(State())

    init(documents: any DocumentStore, logger: Logger) {
        self.documents = documents
        self.logger = logger
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
        }
    }

    /// Drops observers whose owner is gone or whose lane was cancelled.
    func sweep() {
        let gone = state.withLock { state in
            state.evaluations.values.flatMap { $0.registrations.values.filter(\.isGone) }
        }
        for registration in gone { unregister(registration) }
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
        case .some(.some(let documents)): registration.lane.submit(Snapshot(documents: documents))
        case .some(.none): break
        case .none: await evaluate(registration.query)
        }
    }

    /// After a commit: runs again only the queries the changes can affect.
    func apply(_ changes: ChangeSet) async {
        let candidates = state.withLock { state in
            state.evaluations.filter { changes.collections.contains($0.key.collection) }.map { ($0.key, $0.value.ids) }
        }
        for (query, ids) in candidates {
            let changed = changes.changes(in: query.collection)
            if await isRelevant(changed, to: query, resultIDs: ids) {
                await evaluate(query)
            } else {
                state.withLock { $0.statistics.skippedIrrelevant += 1 }
            }
        }
    }

    /// Whether the changes may alter the query's result: a changed document was in it, or matches it now.
    func isRelevant(_ changed: [String: ChangeSet.Kind], to query: DocumentQuery, resultIDs: Set<String>) async -> Bool {
        if changed.keys.contains(where: resultIDs.contains) { return true }
        let candidates = changed.filter { $0.value != .removed }.map(\.key)
        guard !candidates.isEmpty else { return false }
        guard candidates.count <= Self.relevanceCheckLimit else { return true }
        do {
            return try await documents.read { reader in
                try candidates.contains { id in
                    guard let document = try reader.document(id: id, in: query.collection) else { return false }
                    return query.predicate.matches(document.body)
                }
            }
        } catch {
            logger.warning("live query: could not read changed documents; running the query again", metadata: ["error": "\(error)"])
            return true
        }
    }

    /// Runs the query and offers the result to every observer of it (each lane skips a result equal to the last
    /// one it delivered).
    func evaluate(_ query: DocumentQuery) async {
        let result: [Document]
        do {
            result = try await documents.documents(matching: query).map(Document.init)
        } catch {
            logger.error(
                "live query failed", metadata: ["collection": "\(query.collection)", "error": "\(error)"])
            return
        }
        let registrations = state.withLock { state -> [Registration] in
            state.statistics.evaluations += 1
            guard var evaluation = state.evaluations[query] else { return [] }
            evaluation.documents = result
            evaluation.ids = Set(result.map(\.id))
            evaluation.isEvaluated = true
            state.evaluations[query] = evaluation
            return Array(evaluation.registrations.values)
        }
        let snapshot = Snapshot(documents: result)
        for registration in registrations { registration.lane.submit(snapshot) }
    }
}
