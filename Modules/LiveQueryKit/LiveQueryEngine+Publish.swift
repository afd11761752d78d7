import DocumentStoreKit
import Logging
import TetherClock
import TetherConcurrency

/// Running a query, and offering its result or its failure to its observers.
extension LiveQueryEngine {
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

    /// Records that a query failed, keeping its last good result, offers the failure to its observers, and schedules
    /// a retry (see ``EvaluationRetry``).
    func publishFailure(_ error: any Error, for query: DocumentQuery) {
        let (published, serial, retryDelay) = state.withLock { state -> (PublishedResult?, UInt64, Duration?) in
            state.statistics.failures += 1
            state.failureSerial += 1
            guard state.evaluations[query] != nil else { return (nil, state.failureSerial, nil) }
            state.evaluations[query]?.isFailing = true
            let delay = schedulesRetry(of: query, in: &state)
            return (state.evaluations[query]!.published, state.failureSerial, delay)
        }
        if let retryDelay { retry(query, after: retryDelay) }
        let failure = Snapshot.failure(EvaluationFailure(error: error, serial: serial))
        if let published { handOut(failure, to: published.publish(failure).ready) }
    }

    /// Records a query's new result and offers it to its observers (see ``PublishedResult``).
    func publish(_ result: [Document], commit: UInt64, for query: DocumentQuery, incremental: Bool) {
        // Compared outside the lock (only this consumer changes a result, so it cannot change in between).
        let previous = state.withLock { state in state.evaluations[query].map { ($0.isEvaluated, $0.documents) } }
        let isNew = previous.map { isEvaluated, documents in !isEvaluated || documents != result } ?? true
        let (published, content) = state.withLock { state -> (PublishedResult?, UInt64) in
            if incremental { state.statistics.incrementalUpdates += 1 } else { state.statistics.evaluations += 1 }
            guard var evaluation = state.evaluations[query] else { return (nil, 0) }
            if isNew { evaluation.content += 1 }
            evaluation.documents = result
            evaluation.ids = Set(result.map(\.id))
            evaluation.isEvaluated = true
            evaluation.isFailing = false
            evaluation.failureStreak = 0
            evaluation.commit = commit
            state.evaluations[query] = evaluation
            return (evaluation.published, evaluation.content)
        }
        // To the observers idle now; each busy one takes it (or a later one) when it signals — from its lane, when
        // none was idle. Slow ones have the next result computed just before they are due to signal.
        let snapshot = Snapshot.documents(result, commit: commit, content: content)
        guard let published else { return }
        let publication = published.publish(snapshot)
        handOut(snapshot, to: publication.ready)
        handOut(snapshot, to: publication.staged)
        if let ahead = publication.computeAhead { computeAhead(query, after: ahead) }
    }

    /// Submits `snapshot` to the observers it was handed to.
    func handOut(_ snapshot: Snapshot, to ready: [Registration]) {
        for registration in ready { registration.lane.submit(snapshot) }
    }
}
