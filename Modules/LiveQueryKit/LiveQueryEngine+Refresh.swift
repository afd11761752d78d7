import DocumentStoreKit
import Logging
import TetherConcurrency

/// Bringing results up to date: the engine's consumer calls these, one round at a time, so results are computed in
/// commit order.
extension LiveQueryEngine {
    /// After a commit: brings up to date only the queries the changes can affect — from the changed documents alone
    /// when that is exact, by running the query otherwise.
    func apply(_ changes: ChangeSet) async {
        let collections = changes.collections
        // Commits whose changes are unknown (pruned from a change log before this process read them) may have
        // touched any collection: every query is run again.
        let touches = { (collection: String) in changes.hasUnknownChanges || collections.contains(collection) }
        let candidates = state.withLock { state in
            // Results in other collections stay exact through these commits.
            for (query, evaluation) in state.evaluations
            where !touches(query.collection) && changes.commits.lowerBound <= evaluation.commit + 1 {
                state.evaluations[query]?.commit = max(evaluation.commit, changes.commits.upperBound)
            }
            return state.evaluations.filter {
                touches($0.key.collection) && ($0.value.isEvaluated || $0.value.isFailing)
            }
            .map { ($0.key, $0.value) }
        }
        for (query, evaluation) in candidates {
            // A failing query is run again at each commit that touches its collection, until it succeeds.
            let refreshed: Refresh =
                evaluation.isFailing
                ? .rerun(.failure)
                : changes.hasUnknownChanges
                    ? .rerun(.unknownChanges) : await refresh(query, evaluation, changes: changes)
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
            case .rerun(let reason):
                state.withLock { state in
                    switch reason {
                    case .laterCommit: state.statistics.reruns.laterCommit += 1
                    case .offset: state.statistics.reruns.offset += 1
                    case .windowRefill: state.statistics.reruns.windowRefill += 1
                    case .manyChanges: state.statistics.reruns.manyChanges += 1
                    case .unknownChanges: state.statistics.reruns.unknownChanges += 1
                    case .failure: state.statistics.reruns.failure += 1
                    }
                }
                await evaluate(query)
            }
        }
    }

    enum Refresh {
        /// The changes cannot alter the result, which is exact at `commit` when that is known.
        case irrelevant(commit: UInt64?)
        /// The result at `commit`, computed from the changed documents.
        case incremental([Document], commit: UInt64)
        /// Run the query, for this reason.
        case rerun(RerunReason)
    }

    /// Why a query must run again (counted in ``LiveQueryStatistics/Reruns``).
    enum RerunReason {
        case laterCommit, offset, windowRefill, manyChanges, unknownChanges, failure
    }

    /// Decides how the changes reach the query's result. The changed documents are read with the read's commit
    /// number: when it is the change set's last commit, and the result is no older than the set's first commit,
    /// applying the changed documents to the result gives exactly the query's result at that commit.
    func refresh(_ query: DocumentQuery, _ evaluation: Evaluation, changes: ChangeSet) async -> Refresh {
        let changed = changes.changes(in: query.collection)
        guard changed.count <= Self.relevanceCheckLimit else { return .rerun(.manyChanges) }
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
            return .rerun(.failure)
        }
        let wasIn = changed.keys.contains(where: evaluation.ids.contains)
        let matchesNow = read.documents.values.contains { query.predicate.matches($0.body) }
        // With an offset, a document before the window is in no result yet moves the window when it comes or goes,
        // and whether it matched before is not known: any change may alter the result.
        guard query.offset == 0 else { return .rerun(.offset) }
        guard wasIn || matchesNow else {
            // The result stays right through these commits for every document they touched, except any that
            // changed again later — and those are in a later change set, to be taken from their current state.
            let contiguous = changes.commits.lowerBound <= evaluation.commit + 1
            return .irrelevant(commit: contiguous ? changes.commits.upperBound : nil)
        }
        guard read.commit == changes.commits.upperBound else { return .rerun(.laterCommit) }
        guard changes.commits.lowerBound <= evaluation.commit + 1 else { return .rerun(.unknownChanges) }
        guard let documents = Self.merge(changed.keys, read.documents, into: evaluation.documents, query: query) else {
            return .rerun(.windowRefill)
        }
        return .incremental(documents, commit: read.commit)
    }

    /// The result with each changed document taken out and, if it matches now, put back in its place; nil when
    /// that cannot be exact.
    ///
    /// Unchanged documents outside a result are either not matching or — only when the result filled its limit —
    /// sorted after its last document. So the merged list is exact up to that old last document: if at least
    /// `limit` documents sort no later than it, they are the new window; otherwise the query must refill it.
    static func merge(
        _ changed: Dictionary<String, ChangeSet.Kind>.Keys, _ current: [String: StoredDocument],
        into result: [Document],
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
        let known = merged.prefix {
            !query.areInIncreasingOrder(boundary, StoredDocument(validatedID: $0.id, body: $0.value))
        }
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
        let snapshot = Snapshot.documents(result, commit: commit)
        for registration in registrations { registration.lane.submit(snapshot) }
    }
}
