import Foundation
import LiveQueryKit
import PersistenceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Failures reach observers: an evaluation that fails is delivered to `onError:` (or thrown by `snapshots()`), the
/// last good result stays, and a recovered store resumes deliveries at the next commit.
@Suite("Live queries: evaluation failures reach the observer", .timeLimit(minutes: 1), .leakChecked)
struct FailureTests {
    /// A store whose reads fail while `faults.readFailure` is 1. Its commits reach the feed as another process's
    /// do, without their documents, so that bringing a result up to date reads the store. Failed queries run again
    /// at the next commit only, unless given a retry (on `clock`; see `RetryTests`).
    static func faultyStore(
        _ kind: String, retry: EvaluationRetry = .atNextCommit, clock: ManualTimeSource = ManualTimeSource()
    ) throws -> (Store, FaultyDocumentStore) {
        let remote = GatedDocumentStore(base: try TestStores.documents(kind))
        let faulty = FaultyDocumentStore(base: remote, faults: .init(), seed: 1)
        return (Store(faulty, configuration: .init(retry: retry, timeSource: clock)), faulty)
    }

    /// What `onError` received, in order.
    final class Errors: Sendable {
        let all = LockedValue<[String]>([])
        func append(_ error: any Error) { all.withLock { $0.append("\(error)") } }
        var count: Int { all.withLock { $0.count } }
    }

    /// An observation recording its results and its errors, in order.
    struct Recording {
        let received = Received()
        let errors = Errors()
        let liveQuery: LiveQuery

        init(_ query: PendingQuery) throws {
            let (received, errors) = (received, errors)
            liveQuery = try query.observeLocal(onError: { errors.append($0) }) { received.append($0, $1) }
        }
    }

    @Test(
        "A failed re-evaluation reaches onError, the last good result stays, and the next commit resumes",
        arguments: TestStores.kinds)
    func failureThenRecovery(kind: String) async throws {
        let (store, faulty) = try Self.faultyStore(kind)
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let recording = try Recording(items.findAll().sort("_id"))
        let (received, errors) = (recording.received, recording.errors)
        try await received.wait { $0.last == ["a"] }

        faulty.faults.readFailure = 1
        try await items.upsert(["_id": "b"])  // the write succeeds; evaluating its effect does not
        try await eventually { errors.count == 1 }
        #expect(errors.all.withLock { $0 }.first?.contains("fault injected: the read failed") == true)
        #expect(store.statistics.failures >= 1)
        #expect(received.last == ["a"], "the observer keeps its last good result")

        faulty.faults.readFailure = 0
        try await items.upsert(["_id": "c"])
        try await received.wait { $0.last == ["a", "b", "c"] }
        guard case .update(let update) = received.all.last?.event else {
            Issue.record("results resumed with an update from the last good result")
            return
        }
        #expect(update.oldDocuments.map(\.id) == ["a"])
        #expect(update.insertions == [1, 2])
        await recording.liveQuery.stop()
    }

    @Test(
        "A failing first evaluation reaches onError; the first result after recovery is the initial one",
        arguments: TestStores.kinds)
    func initialFailure(kind: String) async throws {
        let (store, faulty) = try Self.faultyStore(kind)
        let items = store.collection("items")
        faulty.faults.readFailure = 1
        let received = Received()
        let errors = Errors()
        let liveQuery = try items.findAll().observeLocalWithNextSignal(onError: { errors.append($0) }) {
            documents, event, signalNext in
            received.append(documents, event)
            signalNext()
        }
        try await eventually { errors.count == 1 }
        #expect(received.count == 0)
        faulty.faults.readFailure = 0
        try await items.upsert(["_id": "a"])
        try await received.wait { $0.count == 1 }
        #expect(received.all.first?.event == .initial)
        #expect(received.last == ["a"])
        await liveQuery.stop()
    }

    @Test("snapshots() throws the evaluation's error and ends the observation")
    func snapshotsThrow() async throws {
        let (store, faulty) = try Self.faultyStore("memory")
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let snapshots = try items.findAll().snapshots()
        var iterator = snapshots.makeAsyncIterator()
        #expect(try await iterator.next()?.documents.map(\.id) == ["a"])
        faulty.faults.readFailure = 1
        try await items.upsert(["_id": "b"])
        await #expect(throws: PersistenceError.self) { _ = try await iterator.next() }
        try await eventually { store.statistics.observers == 0 }
        #expect(try await iterator.next() == nil)
    }
}
