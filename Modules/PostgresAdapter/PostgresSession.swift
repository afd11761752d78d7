import Logging
import NIOCore
import PersistenceKit
import PostgresNIO
import TetherConcurrency

/// One leased connection, used synchronously: `DocumentStore`'s transaction bodies are synchronous closures, so they
/// run on a thread of the store's own thread pool — never one of Swift concurrency's — and each statement waits there
/// for its result while the connection's event loop does the I/O.
struct PostgresSession {
    let connection: PostgresConnection
    let logger: Logger
    /// The store, for errors: its URL without the password.
    let store: String
    /// Set when the task that asked for this work is cancelled: the next statement throws `CancellationError`.
    let cancellation: CancellationFlag
    /// The store's counters: every statement counts.
    let counters: PostgresCounters
    /// The store's statements in flight: each wait ends by the statement's deadline or the store's stop.
    let inFlight: PostgresInFlight
    let statementTimeout: Duration

    /// Runs one statement and returns its rows.
    ///
    /// - Throws: `CancellationError` when cancelled before it starts; a `PersistenceError` for what PostgreSQL or
    ///   the connection reported, with `collection` and `id` as context.
    @discardableResult
    func run(_ query: PostgresQuery, collection: String? = nil, id: String? = nil) throws -> PostgresQueryResult {
        if cancellation.isCancelled { throw CancellationError() }
        return try unlessCancelled(query, collection: collection, id: id)
    }

    /// Runs one statement even when cancelled (`ROLLBACK`, cleaning up).
    @discardableResult
    func unlessCancelled(_ query: PostgresQuery, collection: String? = nil, id: String? = nil) throws
        -> PostgresQueryResult
    {
        counters.count(\.statements)
        do {
            return try inFlight.run(query, on: connection, logger: logger, timeout: statementTimeout, store: store)
        } catch {
            throw PersistenceError.mappingPostgres(error, store: store, collection: collection, id: id)
        }
    }
}

/// Whether the task that asked for some work has been cancelled; read by the thread doing the work.
final class CancellationFlag: Sendable {
    private let cancelled = LockedValue(false)

    init() {}

    var isCancelled: Bool { cancelled.withLock { $0 } }

    func cancel() { cancelled.withLock { $0 = true } }
}
