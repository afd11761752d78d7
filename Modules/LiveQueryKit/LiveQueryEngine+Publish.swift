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
        publish(result.documents, commit: result.commit, for: query, changed: nil)
    }

    /// Records that a query failed, keeping its last good result, offers the failure to its observers, and schedules
    /// a retry (see ``EvaluationRetry``).
    func publishFailure(_ error: any Error, for query: DocumentQuery) {
        let (date, now) = (timeSource.now, moment)
        let (failure, ready, retryDelay) = state.withLock { state -> (Snapshot, [Registration], Duration?) in
            state.statistics.failures += 1
            state.failureSerial += 1
            let failure = Snapshot.failure(EvaluationFailure(error: error, serial: state.failureSerial))
            guard let index = state.evaluations.index(forKey: query) else { return (failure, [], nil) }
            state.relevance.failed(query)
            let delay = schedulesRetry(in: &state.evaluations.values[index].schedule)
            let ready = state.evaluations.values[index].schedule.publish(failure, date: date, at: now).ready
            return (failure, ready, delay)
        }
        if let retryDelay { retry(query, after: retryDelay) }
        handOut(failure, to: ready)
    }

    /// Records a query's new result and offers it to its observers (see ``QuerySchedule``). `changed`: the `_id`s
    /// of the changed documents an incremental update merged into the last result; nil when the query ran.
    func publish(_ result: [Document], commit: UInt64, for query: DocumentQuery, changed: Set<String>?) {
        // Compared outside the lock (only this consumer changes a result, so it cannot change in between).
        let previous = state.withLock { state in
            state.evaluations[query].map { ($0.isEvaluated, $0.documents, $0.ids) }
        }
        let isNew = previous.map { isEvaluated, documents, _ in !isEvaluated || documents != result } ?? true
        let ids = Self.ids(of: result, previous: previous?.2, changed: changed)
        let (date, now) = (timeSource.now, moment)
        let published = state.withLock { state -> (Snapshot, QuerySchedule.Publication)? in
            if changed != nil { state.statistics.incrementalUpdates += 1 } else { state.statistics.evaluations += 1 }
            // In place, through its index (see `State.withEvaluation`).
            guard let index = state.evaluations.index(forKey: query) else { return nil }
            state.relevance.published(query, ids: ids, previous: state.evaluations.values[index].ids)
            if isNew { state.evaluations.values[index].content += 1 }
            state.evaluations.values[index].documents = result
            if let ids { state.evaluations.values[index].ids = ids }
            state.evaluations.values[index].commit = commit
            state.evaluations.values[index].schedule.phase = .current
            let snapshot = Snapshot.documents(result, commit: commit, content: state.evaluations.values[index].content)
            return (snapshot, state.evaluations.values[index].schedule.publish(snapshot, date: date, at: now))
        }
        // To the observers idle now; each busy one takes it (or a later one) when it signals — from its lane, when
        // none was idle. Slow ones have the next result computed just before they are due to signal.
        guard let (snapshot, publication) = published else { return }
        handOut(snapshot, to: publication.ready)
        handOut(snapshot, to: publication.staged)
        if let ahead = publication.computeAhead { computeAhead(query, after: ahead) }
    }

    /// The `_id`s of `result`, or nil when they are `previous`'s: after a merge in which no changed document went into
    /// the result or out of it, and which left it the same size. Only changed documents go into a merged result, and a
    /// document leaves it only if it changed or was pushed past the limit by one that went in — so then nothing went
    /// in or out, and the last result's set serves, without hashing each `_id` again.
    static func ids(of result: [Document], previous: Set<String>?, changed: Set<String>?) -> Set<String>? {
        guard let previous, let changed, changed.count <= 8, result.count == previous.count,
            changed.allSatisfy({ id in previous.contains(id) == result.contains { $0.id == id } })
        else { return Set(result.map(\.id)) }
        return nil
    }

    /// Submits `snapshot` to the observers it was handed to.
    func handOut(_ snapshot: Snapshot, to ready: [Registration]) {
        for registration in ready { registration.lane.submit(snapshot) }
    }
}
