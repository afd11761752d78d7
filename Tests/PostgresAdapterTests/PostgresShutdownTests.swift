import DocumentStoreKit
import Logging
import PostgresAdapter
import ServiceLifecycle
import Testing
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Graceful shutdown in a `ServiceGroup`, as the pipeline runs a store: the connection pool serves the store until it
/// has let its writes finish and unregistered its listener, and only then stops.
@Suite("PostgreSQL: graceful shutdown", PostgresTestServer.required, .timeLimit(minutes: 2))
struct PostgresShutdownTests {
    @Test("Graceful shutdown unregisters the listener before the pool stops: the schema keeps no reader for it")
    func unregistersBeforeThePoolStops() async throws {
        var configuration = try PostgresTestServer.freshConfiguration()
        configuration.catchUpInterval = .milliseconds(20)
        let store = try PostgresDocumentStore(configuration: configuration)
        let readers = "SELECT count(*)::text FROM \(configuration.schema).tether_change_log_readers"
        let group = ServiceGroup(
            configuration: .init(services: [store], logger: Logger(label: "tether.tests.postgres.shutdown")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await store.insert(.object(["_id": .string("a")]), into: "items")
            // The listener registers as it catches up, every 20 ms.
            try await eventually(within: .seconds(20)) {
                (try? await PostgresTestServer.execute(readers)) == ["1"]
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(try await PostgresTestServer.execute(readers) == ["0"], "the listener unregistered")
        try await PostgresTestServer.dropSchema(of: configuration)
    }
}
