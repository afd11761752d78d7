import Logging
import NIOCore
import NIOPosix
import PersistenceKit
import PostgresNIO
import TetherConcurrency

/// One PostgreSQL connection of a synchronous part's own — the entity cache's, the mutation outbox's: opened at the
/// first call and again after it is lost, each statement waited for on the caller's thread (never one of Swift
/// concurrency's: those parts are called on their own queues).
final class DedicatedConnection: Sendable {
    let configuration: PostgresConfiguration
    /// What it serves, in messages: "the cache".
    private let role: String
    /// Statements run on each new connection before its first use (creating the schema and tables).
    private let preparation: [String]
    /// Called with each new connection after its preparation.
    private let opened: @Sendable (PostgresConnection) throws -> Void
    private let connection = LockedValue<PostgresConnection?>(nil)
    private let isClosed = LockedValue(false)

    init(
        _ role: String, configuration: PostgresConfiguration, preparation: [String],
        opened: @escaping @Sendable (PostgresConnection) throws -> Void = { _ in }
    ) {
        self.role = role
        self.configuration = configuration
        self.preparation = preparation
        self.opened = opened
    }

    deinit {
        // Not waited for: a deinit never blocks.
        if let connection = connection.withLock({ $0 }) { Self.close(connection) }
    }

    /// Closes `connection` without waiting, keeping it alive until it is closed (postgres-nio checks that a
    /// connection is closed when it goes).
    private static func close(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// Closes the connection: later calls fail with `PersistenceError.Kind.closed`.
    func close() {
        isClosed.withLock { $0 = true }
        if let connection = connection.withLock({ $0.take() }) { Self.close(connection) }
    }

    /// Runs one statement, connecting first when there is no connection; a connection that failed is dropped, so
    /// that the next call opens a new one.
    @discardableResult
    func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), id: String? = nil) throws(PersistenceError)
        -> PostgresQueryResult
    {
        if isClosed.withLock({ $0 }) {
            throw PersistenceError(.closed, "\(role) is closed", file: configuration.description, id: id)
        }
        let connection = try connected()
        do {
            return try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: configuration.logger)
                .wait()
        } catch {
            if connection.isClosed {
                self.connection.withLock { if $0 === connection { $0 = nil } }
            }
            throw Self.persistenceError(error, store: configuration.description, id: id)
        }
    }

    private func connected() throws(PersistenceError) -> PostgresConnection {
        if let open = connection.withLock({ $0 }), !open.isClosed { return open }
        let store = configuration.description
        do {
            let new = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(),
                configuration: try PostgresConnectionConfigurations.connection(configuration), id: 0,
                logger: configuration.logger
            ).wait()
            do {
                try prepare(new)
                try opened(new)
            } catch {
                Self.close(new)
                throw error
            }
            connection.withLock { $0 = new }
            return new
        } catch {
            throw Self.persistenceError(error, store: store, id: nil)
        }
    }

    /// Runs the preparation under the schema's advisory lock, in one transaction.
    private func prepare(_ connection: PostgresConnection) throws {
        var lock = PostgresBindings()
        lock.append("tether:\(configuration.schema)")
        let statements =
            [
                PostgresQuery(unsafeSQL: "BEGIN"),
                PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext($1))", binds: lock),
                PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(configuration.schema)"),
            ] + preparation.map { PostgresQuery(unsafeSQL: $0) } + [PostgresQuery(unsafeSQL: "COMMIT")]
        for query in statements {
            _ = try connection.query(query, logger: configuration.logger).wait()
        }
    }

    /// `error` as a `PersistenceError`: mapped when it is PostgreSQL's, wrapped as `other` otherwise.
    static func persistenceError(_ error: any Error, store: String, id: String?) -> PersistenceError {
        let mapped = PersistenceError.mappingPostgres(error, store: store, id: id)
        return mapped as? PersistenceError
            ?? PersistenceError(.other, "\(mapped)", file: store, id: id, cause: mapped)
    }
}
