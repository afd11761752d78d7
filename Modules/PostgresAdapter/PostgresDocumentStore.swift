public import DocumentStoreKit
import Foundation
import Logging
import NIOCore
import NIOPosix
public import PersistenceKit
import PostgresNIO
public import ServiceLifecycle

/// A `DocumentStore` in PostgreSQL, shared by every process that uses the same database and schema: documents as
/// `jsonb`, queries compiled with bound parameters only, declared indexes as expression indexes, and a change log
/// that brings each process's commits to every other process's live queries — in commit order, none lost.
///
/// It is a service: ``run()`` opens the schema, runs the connection pool and the listener, and on graceful shutdown
/// lets the writes in flight finish. Operations wait while it starts.
///
/// ```swift
/// let store = try PostgresDocumentStore(url: "postgres://app@127.0.0.1:5432/app")
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { try await store.run() }
///     try await store.upsert(["_id": "a1", "store_id": "abc123", "name": "Pear"], into: "items")
///     group.cancelAll()
/// }
/// ```
///
/// Across processes: every commit appends an entry to `tether_change_log` (its number, the changed ids) in its own
/// transaction and sends a `NOTIFY` carrying the number. The listener wakes on it — and, as a safety net, every
/// ``PostgresConfiguration/catchUpInterval`` — and reads the log after the last commit it published. A dropped
/// connection, a missed notification or a restarted server loses nothing: on reconnecting, the listener reads the
/// log from where it was.
public final class PostgresDocumentStore: DocumentStore, Service, CustomStringConvertible {
    /// Where it connects (never the password).
    public let configuration: PostgresConfiguration
    /// The change feed: this process's commits, and every other process's, in commit order.
    public let changes = ChangeFeed()
    let client: PostgresClient
    let schema: PostgresSchema
    let indexes = DeclaredIndexList()
    let lifecycle: PostgresStoreLifecycle
    let threadPool: NIOThreadPool
    let counters = PostgresCounters()
    let inFlight = PostgresInFlight()
    var logger: Logger { configuration.logger }

    /// Makes a store; nothing connects until ``run()``.
    ///
    /// - Throws: `PersistenceError.Kind.cannotOpen` naming the setting that cannot work.
    public init(configuration: PostgresConfiguration) throws(PersistenceError) {
        try configuration.validate()
        self.configuration = configuration
        schema = PostgresSchema(schema: configuration.schema)
        lifecycle = PostgresStoreLifecycle(store: configuration.description)
        client = PostgresClient(
            configuration: PostgresConnectionConfigurations.client(configuration),
            backgroundLogger: configuration.logger)
        // The threads that run transaction bodies, which are synchronous: one per connection the pool may lend.
        threadPool = NIOThreadPool(numberOfThreads: configuration.poolSize)
    }

    /// Makes a store from a URL (see ``PostgresConfiguration/init(url:)``).
    public convenience init(url: String) throws(PersistenceError) {
        try self.init(configuration: PostgresConfiguration(url: url))
    }

    /// What the store has sent the server so far: statements, reads, writes, change-log reads.
    public var statistics: PostgresStoreStatistics { counters.statistics }

    /// `PostgreSQL store postgres://user@host:port/database`.
    public var description: String { "PostgreSQL store \(configuration)" }

    // MARK: DocumentStore

    /// Runs `body` in a write transaction (see `DocumentStore.write(_:)`), serialized with every other writer of
    /// the database — in this process and in others.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any DocumentTransaction) throws -> T) async throws -> T
    {
        let publisher = try await lifecycle.begin(write: true, timeout: configuration.startTimeout)
        defer { lifecycle.endWrite() }
        counters.count(\.writes)
        let (schema, indexes, configuration) = (schema, indexes, configuration)
        let (result, entries) = try await withSession { session in
            try PostgresTransaction.perform(
                body, session: session, schema: schema, indexes: indexes, publisher: publisher,
                configuration: configuration)
        }
        publisher.publish(entries)
        return result
    }

    /// Runs `body` in a read-only `REPEATABLE READ` transaction: one snapshot, so that its documents and its commit
    /// number agree.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader) throws -> T) async throws -> T {
        _ = try await lifecycle.begin(write: false, timeout: configuration.startTimeout)
        counters.count(\.reads)
        let (schema, indexes) = (schema, indexes)
        return try await withSession { session in
            try session.run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            do {
                let result = try body(PostgresReader(session: session, schema: schema, indexes: indexes))
                try session.run("COMMIT")
                return result
            } catch {
                if (try? session.unlessCancelled("ROLLBACK")) == nil {
                    let _: EventLoopFuture<Void> = session.connection.close()
                }
                throw error
            }
        }
    }

    /// Builds `index` as an expression index on `(collection, (body -> 'a' -> 'b'), …)` — the expressions the query
    /// compiler writes for its paths — and records it, so that every process using the schema knows it. Readers go
    /// on while it is built; writers wait (`CREATE INDEX`).
    public func createIndex(_ index: DocumentIndex) async throws {
        guard !indexes.list.contains(index) else { return }
        _ = try await lifecycle.begin(write: true, timeout: configuration.startTimeout)
        defer { lifecycle.endWrite() }
        let schema = schema
        try await withSession { session in try PostgresIndexes(session: session, schema: schema).create(index) }
        indexes.add(index)
        logger.debug("index created", metadata: ["index": "\(index)", "store": "\(configuration)"])
    }

    /// The indexes declared on the schema — by any process — in the order first declared.
    public func declaredIndexes() async throws -> [DocumentIndex] {
        _ = try await lifecycle.begin(write: false, timeout: configuration.startTimeout)
        let (schema, indexes) = (schema, indexes)
        try await withSession { session in try PostgresIndexes(session: session, schema: schema).load(into: indexes) }
        return indexes.list
    }

    /// How many entries the change log holds now.
    public func changeLogCount() async throws -> Int {
        _ = try await lifecycle.begin(write: false, timeout: configuration.startTimeout)
        let schema = schema
        return try await withSession { session in try PostgresChangeLog(session: session, schema: schema).count() }
    }

    // MARK: Sessions

    /// Runs `work` on a pooled connection, on a thread of the store's pool (transaction bodies are synchronous and
    /// wait for each statement: never on Swift concurrency's threads). Cancelling the calling task makes the next
    /// statement throw `CancellationError`.
    func withSession<T: Sendable>(_ work: @escaping @Sendable (PostgresSession) throws -> T) async throws -> T {
        let (threadPool, logger, store, counters) = (threadPool, logger, configuration.description, counters)
        let (inFlight, statementTimeout) = (inFlight, configuration.statementTimeout)
        let cancellation = CancellationFlag()
        do {
            return try await withTaskCancellationHandler {
                try await client.withConnection { connection in
                    try await threadPool.runIfActive {
                        try work(
                            PostgresSession(
                                connection: connection, logger: logger, store: store, cancellation: cancellation,
                                counters: counters, inFlight: inFlight,
                                statementTimeout: statementTimeout))
                    }
                }
            } onCancel: {
                cancellation.cancel()
            }
        } catch is NIOThreadPoolError.ThreadPoolInactive {
            throw PersistenceError(.closed, "the PostgreSQL store has stopped", file: store)
        } catch {
            throw PersistenceError.mappingPostgres(error, store: store)
        }
    }
}
