import DocumentStoreKit
import Logging
import TetherConcurrency

/// Bringing results up to date: the engine's consumer calls these, one round at a time, so results are computed in
/// commit order.
extension LiveQueryEngine {
    /// After commits: brings up to date only the queries the changes can affect — from the changed documents alone,
    /// read once for every query (or carried by the changes), when that is exact; by running the query otherwise.
    /// A query whose observers are all busy with an earlier result is not brought up to date now: its changes are
    /// held back until one of them is ready (``hold(_:_:counting:schedulingAhead:in:)``); `countedAsHeld` when they
    /// were counted as held back as they came (kept while every query was). `woken`: the queries this round brings up
    /// to date after these changes whatever their observers (see ``round(_:)``) — no computation ahead of a signal is
    /// scheduled for them here, as their result is about to be computed (and its publication schedules the next).
    func apply(_ changes: ChangeSet, countedAsHeld: Bool, woken: Set<DocumentQuery>) async {
        // Commits whose changes are unknown (pruned from a change log before this process read them) may have
        // touched any collection: every query is run again. Results in other collections stay exact through these
        // commits without being touched (``Evaluation/exactCommit(applied:)``).
        let observed = state.withLock { state in
            state.relevance.observed(
                among: changes.hasUnknownChanges ? state.relevance.allCollections : Array(changes.collections))
        }
        guard !observed.isEmpty else { return }
        // The changed documents, in the collections with a query that is not failing (failing ones simply run
        // again).
        let read = await readChanged(changes, in: Set(observed.lazy.filter(\.needsDocuments).map(\.collection)))
        // The queries the changed documents can reach, found from the documents' values and `_id`s without looking
        // at the others (``RelevanceIndex``) — each of those others stays exact through this round untouched.
        let (touched, observedCount) = state.withLock { state in
            var touched: [Candidate] = []
            var observedCount = 0
            for (collection, _) in observed {
                observedCount += state.relevance.activeCount(in: collection)
                let changed = read?.collections[collection]
                // A collection not read (too many changes, only failing queries, no read): every query is reached.
                for query in state.relevance.candidates(in: collection, reachedBy: changed) {
                    guard let evaluation = state.evaluations[query] else { continue }
                    touched.append(
                        Candidate(
                            query: query, ids: evaluation.ids, isFailing: evaluation.schedule.isFailing,
                            deferred: evaluation.held))
                }
            }
            state.statistics.relevanceChecks += touched.count
            return (touched, observedCount)
        }
        // Which of those results the changes can alter, decided exactly from the documents, outside the lock. (Without
        // a read — unknown changes, a failed read — every query counts as altered.)
        let relevant = read.map { read in touched.filter { $0.canBeAltered(by: read) } } ?? touched
        var round: [(DocumentQuery, Basis)] = []
        var own: [(DocumentQuery, Basis, HeldChanges)] = []
        var ahead: [(DocumentQuery, Duration)] = []
        let now = moment
        state.withLock { state in
            state.statistics.skippedIrrelevant += observedCount - relevant.count
            for candidate in relevant {
                let query = candidate.query
                switch Self.hold(
                    query, changes, counting: !countedAsHeld, at: woken.contains(query) ? nil : now, in: &state)
                {
                case nil: continue  // unobserved since
                case .held(let computeAhead)?: if let computeAhead { ahead.append((candidate.query, computeAhead)) }
                case .now(let evaluation, nil)?: round.append((candidate.query, evaluation))
                case .now(let evaluation, let combined?)?: own.append((candidate.query, evaluation, combined))
                }
            }
        }
        for (query, delay) in ahead { computeAhead(query, after: delay) }
        for (query, evaluation) in round { await bring(query, evaluation, changes, read) }
        for (query, evaluation, combined) in own { await bring(query, evaluation, combined) }
    }

    /// What deciding whether a round's changes can alter a result needs, taken under the lock for each query in a
    /// collection the round touched.
    struct Candidate: Sendable {
        let query: DocumentQuery
        let ids: Set<String>
        let isFailing: Bool
        /// The changes held back for the query: its result is that of ``ids`` with these applied, so a document
        /// they touched may be in it even though ``ids`` does not have it.
        let deferred: HeldChanges?

        /// Whether the changed documents can alter the query's result — as it is after any held-back changes too.
        func canBeAltered(by read: ChangedDocuments) -> Bool {
            if isFailing || deferred?.changes.hasUnknownChanges == true { return true }
            guard let deferred = deferred?.changes else { return LiveQueryEngine.canAlter(query, ids: ids, read) }
            let collection = query.collection
            return LiveQueryEngine.canAlter(query, ids: ids, read) {
                deferred.changes[ChangeSet.Key(collection: collection, id: $0)] != nil
            }
        }
    }

    enum Hold {
        /// Held back: see ``QuerySchedule/ChangesDecision/held(computeAhead:)``.
        case held(computeAhead: Duration?)
        /// To bring up to date now: with the round's changes (nil), or with the changes held back before and the
        /// round's, combined.
        case now(Basis, HeldChanges?)
    }

    /// Decides, for one query a round's changes can alter, whether to bring it up to date now or hold the changes back
    /// (``QuerySchedule/changesArrived(_:at:)``), and keeps the engine's records of it. Held-back changes past
    /// ``relevanceCheckLimit`` documents are dropped (``HeldChanges``): the query simply runs again. `counting`: the
    /// changes count as held back (``LiveQueryStatistics/deferrals``) unless they were counted as they came. `now`:
    /// see ``apply(_:countedAsHeld:woken:)``. Under the engine's lock.
    static func hold(
        _ query: DocumentQuery, _ changes: ChangeSet, counting: Bool, at now: Duration?, in state: inout State
    ) -> Hold? {
        // Found once, through its index (see `State.withEvaluation`); nothing below adds or removes an evaluation.
        guard let index = state.evaluations.index(forKey: query) else { return nil }
        // From here on its commit is kept by hand: exact through the rounds that left it alone, and no further
        // while changes are held back.
        switch state.evaluations.values[index].schedule.phase {
        case .current, .held:
            state.evaluations.values[index].commit = max(state.evaluations.values[index].commit, state.catchUp.applied)
        case .unevaluated, .failing:
            break
        }
        switch state.evaluations.values[index].schedule.changesArrived(changes, at: now) {
        case .now(let combined):
            state.relevance.setHeld(query, false)
            return .now(state.evaluations.values[index].basis, combined)
        case .held(let computeAhead):
            state.relevance.setHeld(query, true)
            if counting { state.statistics.deferrals += 1 }
            return .held(computeAhead: computeAhead)
        }
    }

    /// Applies the changes held back for `query`, now that one of its observers is ready. Woken for commits that
    /// turned out not to touch it, an observer that went idle behind the latest result takes that result.
    func applyDeferred(_ query: DocumentQuery) async {
        let taken = state.withLock { state -> (Basis, HeldChanges?)? in
            guard let index = state.evaluations.index(forKey: query) else { return nil }
            guard case .held(let deferred) = state.evaluations.values[index].schedule.phase else {
                return (state.evaluations.values[index].basis, nil)
            }
            // Observers that go idle from here on wait for the result about to be published.
            state.evaluations.values[index].schedule.phase = .current
            state.relevance.setHeld(query, false)
            return (state.evaluations.values[index].basis, deferred)
        }
        guard let (basis, deferred) = taken else { return }
        guard let deferred else { return offerToIdleBehind(query) }
        await bring(query, basis, deferred)
    }

    /// Hands the latest result to the idle observers of `query` that have not taken it (see
    /// ``QuerySchedule/offerToIdleBehind(at:)``).
    func offerToIdleBehind(_ query: DocumentQuery) {
        let now = moment
        let offer = state.withLock { state in
            state.withEvaluation(of: query) { $0.schedule.offerToIdleBehind(at: now) } ?? nil
        }
        if let (snapshot, behind) = offer { handOut(snapshot, to: behind) }
    }

    /// Brings one query up to date with the changes held back for it (and the round's, merged in).
    func bring(_ query: DocumentQuery, _ evaluation: Basis, _ held: HeldChanges) async {
        let read = await readChanged(held.changes, for: evaluation, of: query)
        await bring(query, evaluation, held.changes, read, unknownReason: held.unknownReason)
    }

    /// Brings one query up to date with `changes`, from `read` (nil: the documents could not be read, or are not
    /// needed because the query runs again anyway). Unknown changes run the query again for `unknownReason`.
    func bring(
        _ query: DocumentQuery, _ evaluation: Basis, _ changes: ChangeSet, _ read: ChangedDocuments?,
        unknownReason: LiveQueryStatistics.RerunReason = .unknownChanges
    ) async {
        // A failing query is run again at each commit that touches its collection, until it succeeds.
        let refreshed: Refresh =
            evaluation.isFailing
            ? .rerun(.failure)
            : changes.hasUnknownChanges
                ? .rerun(unknownReason) : read.map { refresh(query, evaluation, $0) } ?? .rerun(.failure)
        switch refreshed {
        case .irrelevant(let commit):
            state.withLock { state in
                state.statistics.skippedIrrelevant += 1
                // Still exact at this commit, if that is known.
                if let commit { state.withEvaluation(of: query) { $0.commit = max($0.commit, commit) } }
            }
            // Held-back changes that alter nothing publish nothing: an observer that went idle behind the latest
            // result, waiting for them, takes that result now.
            offerToIdleBehind(query)
        case .incremental(let documents, let commit, let changed):
            publish(documents, commit: commit, for: query, changed: changed)
        case .rerun(let reason):
            state.withLock { $0.statistics.reruns.count(reason) }
            await evaluate(query)
        }
    }

    /// The documents `changes` touched in one query's collection, for a query brought up to date on its own.
    private func readChanged(_ changes: ChangeSet, for evaluation: Basis, of query: DocumentQuery) async
        -> ChangedDocuments?
    {
        await readChanged(changes, in: evaluation.isFailing ? [] : [query.collection])
    }

    /// The documents `changes` touched in `collections` — those it carries, or else read from the store — or nil
    /// when the read failed (the queries are then run again) or none is needed (the changes are unknown, no
    /// collection is given: the queries are failing).
    private func readChanged(_ changes: ChangeSet, in collections: Set<String>) async -> ChangedDocuments? {
        guard !changes.hasUnknownChanges, !collections.isEmpty else { return nil }
        if let carried = ChangedDocuments(carriedBy: changes, in: collections) { return carried }
        state.withLock { $0.statistics.changedDocumentReads += 1 }
        do {
            return try await readChanged(changes, reading: collections)
        } catch {
            logger.debug(
                "live query: could not read changed documents; running the queries again",
                metadata: ["error": "\(error)"])
            return nil
        }
    }

    enum Refresh {
        /// The changes cannot alter the result, which is exact at `commit` when that is known.
        case irrelevant(commit: UInt64?)
        /// The result at `commit`, computed from the changed documents, whose `_id`s are `changed`.
        case incremental([Document], commit: UInt64, changed: Set<String>)
        /// Run the query, for this reason.
        case rerun(LiveQueryStatistics.RerunReason)
    }

    /// Whether the changed documents can alter the query's result: one of them was in it or matches now — or the
    /// query has an offset (a document before the window is in no result, yet moves the window when it comes or
    /// goes, and whether it matched before is not known), or too many changed to tell.
    /// `mayBeIn` names documents that may be in the result besides `ids` (those touched by changes held back for it).
    static func canAlter(
        _ query: DocumentQuery, ids: Set<String>, _ read: ChangedDocuments, mayBeIn: (String) -> Bool = { _ in false }
    ) -> Bool {
        guard query.offset == 0, let changed = read.collections[query.collection] else { return true }
        return changed.ids.contains { ids.contains($0) || mayBeIn($0) }
            || changed.bodies.contains { query.predicate.matches($0) }
    }

    /// The commit a result that the changes cannot alter is exact at: the read's, when the changes reach it;
    /// otherwise their last, except for any document that changed again after it — and that one is in a later
    /// change set, to be taken from its state then. Nil when the changes do not follow on from the result.
    static func exactCommit(_ evaluation: Basis, _ read: ChangedDocuments) -> UInt64? {
        guard read.changes.commits.lowerBound <= evaluation.commit + 1 else { return nil }
        return min(read.commit, read.changes.commits.upperBound)
    }

    /// Decides how the changes reach the query's result. When the read's changes cover every commit from the
    /// result's to the read's, applying the changed documents as the read found them gives exactly the query's
    /// result at the read's commit.
    ///
    /// Changes can reach the engine after a result that already has them: the query ran again (its read seeing
    /// every commit so far) before the writer's thread had handed them over. Applying them then would take the
    /// documents back to those commits; they are skipped.
    func refresh(_ query: DocumentQuery, _ evaluation: Basis, _ read: ChangedDocuments) -> Refresh {
        guard read.changes.commits.upperBound > evaluation.commit else { return .irrelevant(commit: nil) }
        guard !read.tooMany.contains(query.collection) else { return .rerun(.manyChanges) }
        guard query.offset == 0 else { return .rerun(.offset) }
        guard Self.canAlter(query, ids: evaluation.ids, read) else {
            return .irrelevant(commit: Self.exactCommit(evaluation, read))
        }
        guard read.coversCommit else { return .rerun(.laterCommit) }
        guard read.changes.commits.lowerBound <= evaluation.commit + 1 else { return .rerun(.unknownChanges) }
        let changed = read.collections[query.collection] ?? ChangedDocuments.Changed(capacity: 0)
        guard let documents = Self.merge(changed, into: evaluation.documents, query: query) else {
            return .rerun(.windowRefill)
        }
        return .incremental(documents, commit: read.commit, changed: changed.ids)
    }
}
