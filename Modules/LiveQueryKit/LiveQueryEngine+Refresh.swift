import DocumentStoreKit
import Logging
import TetherConcurrency

/// Bringing results up to date: the engine's consumer calls these, one round at a time, so results are computed in
/// commit order.
extension LiveQueryEngine {
    /// After commits: brings up to date only the queries the changes can affect — from the changed documents alone,
    /// read once for every query, when that is exact; by running the query otherwise.
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
        guard !candidates.isEmpty else { return }
        let read = await readChanged(changes, for: candidates)
        for (query, evaluation) in candidates {
            // A failing query is run again at each commit that touches its collection, until it succeeds.
            let refreshed: Refresh =
                evaluation.isFailing
                ? .rerun(.failure)
                : changes.hasUnknownChanges
                    ? .rerun(.unknownChanges) : read.map { refresh(query, evaluation, $0) } ?? .rerun(.failure)
            switch refreshed {
            case .irrelevant(let commit):
                state.withLock { state in
                    state.statistics.skippedIrrelevant += 1
                    // Still exact at this commit, if that is known.
                    if let commit, let known = state.evaluations[query]?.commit {
                        state.evaluations[query]?.commit = max(known, commit)
                    }
                }
            case .incremental(let documents, let commit):
                publish(documents, commit: commit, for: query, incremental: true)
            case .rerun(let reason):
                state.withLock { $0.statistics.reruns.count(reason) }
                await evaluate(query)
            }
        }
    }

    /// The documents `changes` touched in the candidates' collections — those it carries, or else read from the
    /// store — or nil when the read failed (the queries are
    /// then run again) or none is needed (the changes are unknown, the candidates are failing).
    private func readChanged(
        _ changes: ChangeSet, for candidates: [(DocumentQuery, Evaluation)]
    ) async -> ChangedDocuments? {
        guard !changes.hasUnknownChanges else { return nil }
        let collections = Set(candidates.lazy.filter { !$0.1.isFailing }.map(\.0.collection))
        guard !collections.isEmpty else { return nil }
        if let carried = ChangedDocuments(carriedBy: changes, in: collections) { return carried }
        state.withLock { $0.statistics.changedDocumentReads += 1 }
        do {
            return try await readChanged(changes, in: collections)
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
        /// The result at `commit`, computed from the changed documents.
        case incremental([Document], commit: UInt64)
        /// Run the query, for this reason.
        case rerun(LiveQueryStatistics.RerunReason)
    }

    /// Decides how the changes reach the query's result. When the read's changes cover every commit from the
    /// result's to the read's, applying the changed documents as the read found them gives exactly the query's
    /// result at the read's commit.
    func refresh(_ query: DocumentQuery, _ evaluation: Evaluation, _ read: ChangedDocuments) -> Refresh {
        guard !read.tooMany.contains(query.collection) else { return .rerun(.manyChanges) }
        let changed = read.changed[query.collection] ?? [:]
        let found = read.found[query.collection] ?? [:]
        let wasIn = changed.keys.contains(where: evaluation.ids.contains)
        let matchesNow = found.values.contains { query.predicate.matches($0.body) }
        // With an offset, a document before the window is in no result yet moves the window when it comes or goes,
        // and whether it matched before is not known: any change may alter the result.
        guard query.offset == 0 else { return .rerun(.offset) }
        let followsOn = read.changes.commits.lowerBound <= evaluation.commit + 1
        guard wasIn || matchesNow else {
            // The result stays right through the changes for every document they touched. When they reach the
            // read's commit it is exact there; otherwise at their last commit, except for any document that changed
            // again after it — and that one is in a later change set, to be taken from its state then.
            return .irrelevant(commit: followsOn ? min(read.commit, read.changes.commits.upperBound) : nil)
        }
        guard read.coversCommit else { return .rerun(.laterCommit) }
        guard followsOn else { return .rerun(.unknownChanges) }
        guard let documents = Self.merge(changed.keys, found, into: evaluation.documents, query: query) else {
            return .rerun(.windowRefill)
        }
        return .incremental(documents, commit: read.commit)
    }
}
