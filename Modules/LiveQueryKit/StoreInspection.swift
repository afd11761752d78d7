package import DeliveryKit
import DocumentStoreKit
import Foundation
package import OwnershipKit
import TetherClock
import TetherConcurrency
import TetherJSON

/// What an inspector shows of a ``Store``: its live queries, who observes each and owns the observation, what waits
/// for a slow consumer, and how far behind the store each observer is. Taken on demand by ``Store/inspect()``;
/// nothing is recorded for it otherwise. Field names are stable: they are the inspector's JSON.
package struct StoreInspection: Sendable, Hashable, Codable {
    /// The store's last published commit.
    package var lastCommit: UInt64
    /// The engine's counts.
    package var statistics: LiveQueryStatistics
    /// Every observed query (identical queries are one), sorted by collection and query.
    package var liveQueries: [LiveQueryInspection]
}

/// One observed query.
package struct LiveQueryInspection: Sendable, Hashable, Codable {
    /// Its collection.
    package var collection: String
    /// The query as its first observer wrote it (`group == $args.group`, with the arguments bound).
    package var query: String
    /// The compiled query, with its arguments' values.
    package var compiled: String
    /// Documents in its latest result.
    package var documents: Int
    /// The commit its latest result is exact at.
    package var commit: UInt64
    /// Whether its changes are held back while every observer is busy with an earlier result (or commits are kept,
    /// unmerged, while every query is).
    package var isHeldBack: Bool
    /// Whether its last evaluation failed (its observers keep their last good result; it is retried).
    package var isFailing: Bool
    /// Its observers, in the order they were added.
    package var observers: [LiveQueryObserverInspection]
}

/// One observer of a live query.
package struct LiveQueryObserverInspection: Sendable, Hashable, Codable {
    /// Its id in the store, in the order observers were added (stable while it lives).
    package var id: UInt64
    /// How it takes results: `handler` (`observeLocal…`, under next-signal), `async` (`observeLocalAsync`) or
    /// `snapshots` (`snapshots()`).
    package var kind: String
    /// What owns the observation: the owner given, or the `LiveQuery` handle (type `LiveQuery`) when none was.
    package var owners: [ObserverInspection.Owner]
    /// Whether it observes now.
    package var isObserving: Bool
    /// Whether it holds a result it has not yet signalled (`signalNext`, or its handler still running).
    package var isBusy: Bool
    /// The result waiting for its signal, if any — in its lane, or the query's latest, which it takes when it
    /// signals: its documents and commit.
    package var waiting: WaitingResult?
    /// The commit its last received result is current at (nil before the first).
    package var deliveredCommit: UInt64?
    /// How many commits the store is ahead of what it has received.
    package var commitsBehind: UInt64?
    /// Its lane's counts: results delivered, coalesced while it was busy, skipped as unchanged, the most held.
    package var delivery: DeliveryStatistics
}

/// A result waiting for a busy observer.
package struct WaitingResult: Sendable, Hashable, Codable {
    /// Documents in it (0 for a failure waiting to be reported).
    package var documents: Int
    /// The commit it is exact at (nil for a failure).
    package var commit: UInt64?
    /// Its documents' size as compact JSON text, in bytes (measured when inspected).
    package var bytes: Int
    /// Seconds since the engine published it, on the store's time source — nil for a result waiting in the
    /// observer's lane rather than in the query's published result (a result submitted while it was busy).
    package var ageSeconds: Double?

    /// Makes a waiting result's inspection.
    package init(documents: Int, commit: UInt64?, bytes: Int, ageSeconds: Double?) {
        self.documents = documents
        self.commit = commit
        self.bytes = bytes
        self.ageSeconds = ageSeconds
    }
}

extension Store {
    /// The live queries as an inspector shows them (see ``StoreInspection``).
    package func inspect() -> StoreInspection {
        engine.inspect(lastCommit: lastCommit)
    }
}

extension LiveQueryEngine {
    func inspect(lastCommit: UInt64) -> StoreInspection {
        let observed = observers.inspect { $0 }
        let now = timeSource.now
        let queries = state.withLock { state in
            // Commits kept while every query is held back are held back for each (which they touch is known once
            // they are merged).
            let isKeeping = state.hasKeptCommits
            return state.evaluations.mapValues { evaluation in
                (
                    documents: evaluation.documents.count,
                    commit: evaluation.exactCommit(applied: state.catchUp.applied),
                    isHeldBack: evaluation.schedule.isHeld || isKeeping, isFailing: evaluation.schedule.isFailing,
                    schedule: evaluation.schedule
                )
            }
        }
        var byQuery: [DocumentQuery: [(Registration, LiveQueryObserverInspection)]] = [:]
        for (observer, registration) in observed {
            guard let registration else { continue }
            let held = registration.lane.held
            // Staged in the lane, or published, to be taken at its signal.
            let schedule = queries[registration.query]?.schedule
            let waiting =
                held.waiting.map { WaitingResult($0, publishedAt: schedule?.publishedAt(of: $0), now: now) }
                ?? schedule?.owed(to: ObjectIdentifier(registration)).map {
                    WaitingResult($0.snapshot, publishedAt: $0.publishedAt, now: now)
                }
            let delivered = registration.delivered.commit
            byQuery[registration.query, default: []].append(
                (
                    registration,
                    LiveQueryObserverInspection(
                        id: observer.id, kind: registration.kind.rawValue, owners: observer.owners,
                        isObserving: observer.isObserving,
                        isBusy: held.isBusy, waiting: waiting,
                        deliveredCommit: delivered, commitsBehind: delivered.map { lastCommit - min(lastCommit, $0) },
                        delivery: registration.lane.statistics)
                ))
        }
        let liveQueries = byQuery.compactMap { query, observers -> LiveQueryInspection? in
            guard let first = observers.first?.0 else { return nil }
            let evaluation = queries[query]
            return LiveQueryInspection(
                collection: query.collection, query: first.text, compiled: "\(query)",
                documents: evaluation?.documents ?? 0, commit: evaluation?.commit ?? 0,
                isHeldBack: evaluation?.isHeldBack ?? false, isFailing: evaluation?.isFailing ?? false,
                observers: observers.map(\.1))
        }
        return StoreInspection(
            lastCommit: lastCommit, statistics: statistics,
            liveQueries: liveQueries.sorted { ($0.collection, $0.query) < ($1.collection, $1.query) })
    }
}

extension WaitingResult {
    init(_ snapshot: Snapshot, publishedAt: Date?, now: Date) {
        let age = publishedAt.map { max(0, now.timeIntervalSince($0)) }
        switch snapshot {
        case .documents(let documents, let commit, _):
            var output: [UInt8] = []
            let bytes = documents.reduce(0) { total, document in
                output.removeAll(keepingCapacity: true)
                document.value.write(to: &output)
                return total + output.count
            }
            self.init(documents: documents.count, commit: commit, bytes: bytes, ageSeconds: age)
        case .failure: self.init(documents: 0, commit: nil, bytes: 0, ageSeconds: age)
        }
    }
}
