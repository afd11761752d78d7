import DocumentStoreKit
import Foundation
import Logging
import NIOSSL
import PersistenceKit
import PostgresNIO
import ServiceLifecycle

extension PostgresDocumentStore {
    /// Runs the store until graceful shutdown or cancellation: starts the connection pool, creates the schema's
    /// tables when missing, lets operations through, and listens for other processes' commits. On graceful shutdown
    /// it refuses new writes, waits for those in flight, and stops; on cancellation it stops at once. Afterwards every
    /// operation fails with `PersistenceError.Kind.closed`, and the change feed ends.
    ///
    /// - Throws: a `PersistenceError` when the database cannot be reached or its schema cannot be used at the start
    ///   (operations waiting for the store fail with it too).
    public func run() async throws {
        threadPool.start()
        var failure: (any Error)?
        do {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await self.client.run() }
                let schema = schema
                let indexes = indexes
                // On a connection of its own, not the pool's: the pool's run() may not have begun yet.
                let opened = try await withOwnConnection { session in
                    let commit = try schema.prepare(session)
                    try PostgresIndexes(session: session, schema: schema).load(into: indexes)
                    return commit
                }
                let publisher = ChangeLogPublisher(feed: changes, after: opened)
                let listener = PostgresListener(store: self, publisher: publisher)
                lifecycle.started(publisher)
                logger.debug("opened", metadata: ["store": "\(configuration)", "commit": "\(opened)"])
                group.addTask { try await listener.run() }
                do {
                    try await gracefulShutdown()
                    await lifecycle.drain()
                    await listener.unregister()
                } catch {
                    // Cancelled: stop at once.
                }
                group.cancelAll()
            }
        } catch {
            failure = error
        }
        let stopped = PersistenceError(.closed, "the PostgreSQL store has stopped", file: configuration.description)
        lifecycle.finish(
            (failure as? PersistenceError).map { $0.kind == .closed ? stopped : $0 } ?? stopped)
        changes.finish()
        try? await threadPool.shutdownGracefully()
        if let failure, !(failure is CancellationError) {
            throw PersistenceError.mappingPostgres(failure, store: configuration.description)
        }
    }

    /// Runs `work` as ``withSession(_:)`` does, on a connection opened for it and closed afterwards.
    func withOwnConnection<T: Sendable>(_ work: @escaping @Sendable (PostgresSession) throws -> T) async throws -> T {
        let (threadPool, logger, store) = (threadPool, logger, configuration.description)
        do {
            let connection = try await PostgresConnection.connect(
                configuration: listenerConnectionConfiguration(), id: 0, logger: logger)
            let result: Result<T, any Error>
            do {
                result = .success(
                    try await threadPool.runIfActive {
                        try work(
                            PostgresSession(
                                connection: connection, logger: logger, store: store, cancellation: CancellationFlag()))
                    })
            } catch {
                result = .failure(error)
            }
            try? await connection.close()
            return try result.get()
        } catch {
            throw PersistenceError.mappingPostgres(error, store: store)
        }
    }

    /// The configuration of the listener's own connection (not pooled: `LISTEN` holds it).
    func listenerConnectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        switch configuration.tls {
        case .disable: tls = .disable
        case .require: tls = .require(try NIOSSLContext(configuration: Self.unverifiedTLS))
        case .verifyFull: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        var connection = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.user,
            password: configuration.password, database: configuration.database, tls: tls)
        connection.options.connectTimeout = .nanoseconds(
            Int64(configuration.connectTimeout.components.seconds) * 1_000_000_000
                + configuration.connectTimeout.components.attoseconds / 1_000_000_000)
        return connection
    }
}
