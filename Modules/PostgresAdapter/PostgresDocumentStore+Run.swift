import DocumentStoreKit
import Foundation
import Logging
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
                // The pool stays up through graceful shutdown — draining the writes in flight and unregistering the
                // listener need it — and stops when this group is cancelled. PostgresClient.run() stops at the first
                // sign of graceful shutdown; run outside the group's task-locals, it sees none.
                group.addTask {
                    let client = self.client
                    let pool = Task.detached { await client.run() }
                    await withTaskCancellationHandler {
                        await pool.value
                    } onCancel: {
                        pool.cancel()
                    }
                }
                let (schema, indexes, lifecycle) = (schema, indexes, lifecycle)
                // On a connection of its own, not the pool's: the pool's run() may not have begun yet.
                lifecycle.starting(.connecting)
                let opened = try await withOwnConnection { session in
                    lifecycle.starting(.preparingSchema(schema.schema))
                    let commit = try schema.prepare(session)
                    lifecycle.starting(.loadingIndexes)
                    try PostgresIndexes(session: session, schema: schema).load(into: indexes)
                    return commit
                }
                let publisher = ChangeLogPublisher(feed: changes, after: opened)
                let listener = PostgresListener(store: self, publisher: publisher)
                lifecycle.started(publisher)
                logger.debug("opened", metadata: ["store": "\(configuration)", "commit": "\(opened)"])
                // The listener stops before it unregisters: a catch-up still running would register it again.
                let shutDown = try await withThrowingDiscardingTaskGroup { listening in
                    listening.addTask { try await listener.run() }
                    defer { listening.cancelAll() }
                    do {
                        try await gracefulShutdown()
                        await lifecycle.drain()
                        return true
                    } catch {
                        // Cancelled: stop at once.
                        return false
                    }
                }
                if shutDown { await listener.unregister() }
                // Nothing waits for a statement any more: the pool can close every connection.
                inFlight.stop(
                    PersistenceError(.closed, "the PostgreSQL store has stopped", file: configuration.description))
                group.cancelAll()
            }
        } catch {
            failure = error
        }
        let stopped = PersistenceError(.closed, "the PostgreSQL store has stopped", file: configuration.description)
        lifecycle.finish(
            (failure as? PersistenceError).map { $0.kind == .closed ? stopped : $0 } ?? stopped)
        changes.finish()
        inFlight.stop(stopped)
        try? await threadPool.shutdownGracefully()
        if let failure, !(failure is CancellationError) {
            throw PersistenceError.mappingPostgres(failure, store: configuration.description)
        }
    }

    /// Runs `work` as ``withSession(_:)`` does, on a connection opened for it and closed afterwards.
    func withOwnConnection<T: Sendable>(_ work: @escaping @Sendable (PostgresSession) throws -> T) async throws -> T {
        let (threadPool, logger, store, counters) = (threadPool, logger, configuration.description, counters)
        let (inFlight, statementTimeout) = (inFlight, configuration.statementTimeout)
        do {
            let connection = try await PostgresConnection.connect(
                configuration: PostgresConnectionConfigurations.connection(configuration), id: 0, logger: logger)
            let result: Result<T, any Error>
            do {
                result = .success(
                    try await threadPool.runIfActive {
                        try work(
                            PostgresSession(
                                connection: connection, logger: logger, store: store, cancellation: CancellationFlag(),
                                counters: counters, inFlight: inFlight,
                                statementTimeout: statementTimeout))
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
}
