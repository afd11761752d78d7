import DocumentStoreKit
import Logging
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
