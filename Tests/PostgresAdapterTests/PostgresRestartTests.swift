import DocumentStoreKit
import LiveQueryKit
import PostgresAdapter
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// The server restarted while one store writes and another observes — on a cluster of the test's own, so that the
/// other suites' server stays up. Every connection breaks: the pools and the listener connect again, and the
/// listener catches up from the change log, so nothing committed before, during or after is lost.
@Suite(
    "PostgreSQL: the server restarted mid-stream", PostgresTestServer.required, .needsProcessorTime,
    .timeLimit(minutes: 3))
struct PostgresRestartTests {
    @Test(
        "The server stops and starts while a store writes: the other store's feed has every commit, in order, each once, and its live query ends on the final state"
    )
    func restartMidStream() async throws {
        try await TemporaryDirectory.with { directory in
            let server = try await PrivatePostgresServer.start(in: directory)
            do {
                try await Self.writeThroughRestart(on: server)
            } catch {
                try? await server.destroy()
                throw error
            }
            try await server.destroy()
        }
    }

    /// A writer that goes on through failures: each write is tried again until it is acknowledged.
    final class Writer: Sendable {
        let store: PostgresDocumentStore
        let written = LockedValue(0)
        let failures = LockedValue(0)

        init(_ store: PostgresDocumentStore) { self.store = store }

        func write() async throws {
            let n = written.withLock { $0 }
            while true {
                do {
                    try await store.upsert(["_id": .string("d\(n)"), "n": .number(Double(n))], into: "items")
                    written.withLock { $0 += 1 }
                    return
                } catch {
                    // Down: the store fails fast while its pool cannot connect. Give up only after a long outage.
                    guard
                        failures.withLock({
                            $0 += 1
                            return $0
                        }) < 100_000
                    else { throw error }
                    await Task.yield()
                }
            }
        }
    }

    static func writeThroughRestart(on server: PrivatePostgresServer) async throws {
        var configuration = try PostgresConfiguration(url: server.url)
        configuration.schema = "restart"
        configuration.poolSize = 2
        configuration.reconnectDelay = .milliseconds(20)
        configuration.maximumReconnectDelay = .milliseconds(200)
        // A statement sent on a connection the restart broke can wait for an answer that never comes (seen with
        // postgres-nio 1.33.2: the server had the session idle); its deadline fails it and closes the connection.
        configuration.statementTimeout = .seconds(2)
        let writerStore = try PostgresDocumentStore(configuration: configuration)
        let observedStore = try PostgresDocumentStore(configuration: configuration)
        try await PostgresTestServer.running(observedStore) { observed async throws in
            try await PostgresTestServer.running(writerStore) { writerStore async throws in
                // Both run before anything is written: the observer's feed starts at commit 0.
                _ = try await observed.read { try $0.commitNumber() }
                _ = try await writerStore.read { try $0.commitNumber() }
                let feed = PostgresChangeFeedTests.CommitRecorder(observed.changes)
                let counts = LockedValue<[Int]>([])
                let store = Store(observed)
                let liveQuery = try store.collection("items").find("n >= 0").observeLocal { documents, _ in
                    counts.withLock { $0.append(documents.count) }
                }
                let writer = Writer(writerStore)
                for _ in 0..<20 { try await writer.write() }

                // The writer goes on while the server stops and starts again, and for 20 writes after.
                let restarted = LockedValue(false)
                let writing = Task {
                    while !restarted.withLock({ $0 }) { try await writer.write() }
                    for _ in 0..<20 { try await writer.write() }
                }
                try await server.stopServer()
                let writtenWhileDown = writer.written.withLock { $0 }
                try await server.startServer()
                restarted.withLock { $0 = true }
                try await writing.value

                let total = writer.written.withLock { $0 }
                let last = try await writerStore.read { try $0.commitNumber() }
                #expect(last == UInt64(total), "one commit per acknowledged write")
                #expect(total >= writtenWhileDown + 20)
                try await feed.expectContiguous(to: last, "the observing store")
                #expect(
                    observed.statistics.listenerConnections >= 2,
                    "the observing store's listener lost its connection and made another: \(observed.statistics)")
                try await eventually(within: .seconds(20)) { counts.withLock { $0.last } == total }
                await liveQuery.stop()
                #expect(liveQuery.isStopped)
            }
        }
    }
}
