import DocumentStoreKit
import LiveQueryKit
import PersistenceKit
import PostgresAdapter
import PostgresNIO
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

@Suite(
    "PostgresDocumentStore: the document-store conformance suite on a real server", PostgresTestServer.required,
    .needsProcessorTime,
    .timeLimit(minutes: 2))
struct PostgresDocumentStoreTests {
    @Test("Conformance", arguments: DocumentStoreConformance.checks)
    func conformance(_ check: DocumentStoreCheck) async throws {
        try await PostgresTestServer.withStore { store in try await check.run(on: store) }
    }

    @Test("Documents stay when the store stops and another starts on the same schema; the schema is not made twice")
    func restart() async throws {
        let configuration = try PostgresTestServer.freshConfiguration()
        let first = try PostgresDocumentStore(configuration: configuration)
        try await PostgresTestServer.running(first) { store in
            try await store.upsert(["_id": "a", "v": 1], into: "items")
            try await store.createIndex(DocumentIndex(collection: "items", fields: ["v"]))
        }
        // Observed before it runs (the engine subscribes to a feed still at 0), then run: caught up with the
        // schema's commit without a later one.
        let third = try PostgresDocumentStore(configuration: configuration)
        let live = Store(third)
        let received = LockedValue(0)
        let liveQuery = try live.collection("items").find("v == 1").observeLocal { _, _ in
            received.withLock { $0 += 1 }
        }
        try await PostgresTestServer.running(third) { _ async throws in
            await live.waitForLiveQueries(through: 1)
            try await eventually { received.withLock { $0 } == 1 }
        }
        await liveQuery.stop()
        try await PostgresTestServer.withStore(configuration) { store async throws in
            #expect(try await store.document(id: "a", in: "items")?.body == ["_id": "a", "v": 1])
            #expect(try await store.declaredIndexes() == [try DocumentIndex(collection: "items", fields: ["v"])])
            #expect(try await store.read { try $0.commitNumber() } == 1)
            // The feed starts at the schema's commit: a live query caught up with what a read reported is caught up
            // now, not after some later commit.
            #expect(store.changes.lastCommit == 1)
            let live = Store(store)
            let liveQuery = try live.collection("items").find("v == 1").observeLocal { _, _ in }
            await live.waitForLiveQueries(through: 1)
            try await eventually { liveQuery.deliveredCommit == 1 }
            await liveQuery.stop()
            #expect(liveQuery.isStopped)
        }
    }

    @Test("An operation on a store that nobody runs fails, saying so, instead of waiting for ever")
    func notRunning() async throws {
        var configuration = try PostgresTestServer.freshConfiguration()
        configuration.startTimeout = .milliseconds(200)
        let store = try PostgresDocumentStore(configuration: configuration)
        let error = await #expect(throws: PersistenceError.self) {
            try await store.upsert(["_id": "a"], into: "items")
        }
        #expect(error?.kind == .cannotOpen)
        #expect(error?.message.contains("not running") == true)
    }

    @Test("A store whose run() cannot finish starting says what it is still doing, and runs once it can")
    func slowStart() async throws {
        var configuration = try PostgresTestServer.freshConfiguration()
        // How long an operation waits for the start; opening a connection keeps its own, longer timeout.
        configuration.startTimeout = .seconds(3)
        // Another process starting on the same schema holds its advisory lock.
        let holder = try await PostgresTestServer.connect()
        let key = "tether:" + configuration.schema
        let lock: PostgresQuery = "SELECT 'locked' FROM pg_advisory_lock(hashtext(\(key)))"
        try await PostgresTestServer.execute(lock, on: holder)
        // The store's run() waiting for that lock (a bigint key's low 32 bits are the lock's objid).
        let waiting: PostgresQuery = """
            SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
            AND objid = (hashtext(\(key))::bigint & 4294967295)::oid
            """
        let store = try PostgresDocumentStore(configuration: configuration)
        do {
            try await PostgresTestServer.running(store) { store in
                try await eventually { try await PostgresTestServer.execute(waiting, on: holder) == ["1"] }
                let error = await #expect(throws: PersistenceError.self) {
                    try await store.upsert(["_id": "a"], into: "items")
                }
                #expect(error?.kind == .cannotOpen)
                #expect(
                    error?.message.contains("its run() is still creating schema \(configuration.schema)'s tables")
                        == true, "\(String(describing: error))")
                let unlock: PostgresQuery = "SELECT 'unlocked' FROM pg_advisory_unlock_all()"
                try await PostgresTestServer.execute(unlock, on: holder)
                try await eventually { (try? await store.upsert(["_id": "a"], into: "items")) != nil }
                #expect(try await store.document(id: "a", in: "items") != nil)
            }
        } catch {
            try? await holder.close()
            try? await PostgresTestServer.dropSchema(of: configuration)
            throw error
        }
        try await holder.close()
        try await PostgresTestServer.dropSchema(of: configuration)
    }

    @Test("After the store has stopped, operations fail with .closed and the change feed has ended")
    func stopped() async throws {
        let configuration = try PostgresTestServer.freshConfiguration()
        let store = try PostgresDocumentStore(configuration: configuration)
        try await PostgresTestServer.running(store) { store in
            _ = try await store.upsert(["_id": "a"], into: "items")
        }
        let error = await #expect(throws: PersistenceError.self) { try await store.document(id: "a", in: "items") }
        #expect(error?.kind == .closed)
        try await PostgresTestServer.dropSchema(of: configuration)
    }
}
