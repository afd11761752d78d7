import DocumentStoreKit
import Foundation
import Logging
import PostgresAdapter
import PostgresNIO
import Testing

/// The PostgreSQL server the tests use: the one `Scripts/with-postgres.sh` started (`TETHER_POSTGRES_URL`). Without
/// it every suite here is skipped, saying so, and `swift test` alone still passes.
enum PostgresTestServer {
    static let url = ProcessInfo.processInfo.environment["TETHER_POSTGRES_URL"]

    /// Enables a suite only when a server is there.
    static let required = Testing.ConditionTrait.enabled(
        if: url != nil,
        "TETHER_POSTGRES_URL is not set: run the PostgreSQL tests through Scripts/with-postgres.sh swift test")

    /// A configuration on a schema of its own (`t_…`, fresh): each test's store starts empty and leaves the others
    /// alone.
    static func freshConfiguration() throws -> PostgresConfiguration {
        var configuration = try PostgresConfiguration(url: try #require(url))
        configuration.schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(24)
        configuration.poolSize = 4
        return configuration
    }

    /// Runs a store on `configuration` while `body` uses it; stops it and drops its schema afterwards.
    static func withStore<T: Sendable>(
        _ configuration: PostgresConfiguration? = nil, _ body: (PostgresDocumentStore) async throws -> T
    ) async throws -> T {
        let configuration = try configuration ?? freshConfiguration()
        let store = try PostgresDocumentStore(configuration: configuration)
        let result: T
        do {
            result = try await running(store, body)
        } catch {
            try? await dropSchema(of: configuration)
            throw error
        }
        try await dropSchema(of: configuration)
        return result
    }

    /// Runs `store` while `body` uses it, then stops it (cancelling its run) and waits until it has stopped.
    static func running<T: Sendable>(
        _ store: PostgresDocumentStore, _ body: (PostgresDocumentStore) async throws -> T
    ) async throws -> T {
        let run = Task { try await store.run() }
        do {
            let result = try await body(store)
            run.cancel()
            try await run.value
            return result
        } catch {
            run.cancel()
            _ = await run.result
            throw error
        }
    }

    /// Runs `sql` on a connection of its own; returns the first column of each row, as text.
    @discardableResult
    static func execute(_ sql: String) async throws -> [String] {
        try await execute(PostgresQuery(unsafeSQL: sql))
    }

    static let logger = Logger(label: "tether.tests.postgres")

    /// A connection of its own to the server, for the caller to close.
    static func connect() async throws -> PostgresConnection {
        let configuration = try PostgresConfiguration(url: try #require(url))
        return try await PostgresConnection.connect(
            configuration: .init(
                host: configuration.host, port: configuration.port, username: configuration.user,
                password: configuration.password, database: configuration.database, tls: .disable),
            id: 1, logger: logger)
    }

    /// Runs `query` on a connection of its own; returns the first column of each row, as text.
    @discardableResult
    static func execute(_ query: PostgresQuery) async throws -> [String] {
        let connection = try await connect()
        do {
            let lines = try await execute(query, on: connection)
            try await connection.close()
            return lines
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Runs `query` on `connection`; returns the first column of each row, as text.
    @discardableResult
    static func execute(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [String] {
        var lines: [String] = []
        for try await row in try await connection.query(query, logger: logger) {
            lines.append(try row.decode(String?.self) ?? "NULL")
        }
        return lines
    }

    /// PostgreSQL's plan for `query` as the store compiles it, one line per plan node.
    static func plan(
        _ query: DocumentQuery, indexed: Set<DocumentPath>, in configuration: PostgresConfiguration
    ) async throws -> String {
        let compiled = PostgresQueryCompiler.select(
            query, from: "\(configuration.schema).tether_documents", indexed: indexed)
        return try await execute(PostgresQuery(unsafeSQL: "EXPLAIN " + compiled.sql, binds: compiled.binds))
            .joined(separator: " | ")
    }

    static func dropSchema(of configuration: PostgresConfiguration) async throws {
        try await execute("DROP SCHEMA IF EXISTS \(configuration.schema) CASCADE")
    }
}
