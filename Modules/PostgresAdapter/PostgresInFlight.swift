import Logging
import NIOCore
import PersistenceKit
import PostgresNIO
import TetherConcurrency

/// The statements a store's sessions are waiting for, each on a thread of the store's pool: so that no wait can
/// outlive the store or a statement's deadline. A statement's result reaches its waiter through a promise of ours,
/// which the statement's own result, its deadline (``PostgresConfiguration/statementTimeout``) or the store's
/// stopping completes — whichever comes first; in the last two cases the connection, left mid-exchange, is closed.
/// (Seen: a statement in flight on a connection as the client stopped never completed, and the store's stop waited
/// for it for ever.)
final class PostgresInFlight: Sendable {
    private struct Waiting: Sendable {
        let promise: EventLoopPromise<PostgresQueryResult>
        let connection: PostgresConnection
    }

    private struct State: Sendable {
        var waiting: [UInt64: Waiting] = [:]
        var next: UInt64 = 0
        /// Set once the store stops: statements fail at once, with this.
        var stopped: PersistenceError?
    }

    private let state = LockedValue(State())

    /// Sends `query` on `connection` and waits for its result, for at most `timeout`.
    func run(
        _ query: PostgresQuery, on connection: PostgresConnection, logger: Logger, timeout: Duration, store: String
    ) throws -> PostgresQueryResult {
        let promise = connection.eventLoop.makePromise(of: PostgresQueryResult.self)
        let id: UInt64
        let registered = state.withLock { state -> Result<UInt64, PersistenceError> in
            if let stopped = state.stopped { return .failure(stopped) }
            state.next += 1
            state.waiting[state.next] = Waiting(promise: promise, connection: connection)
            return .success(state.next)
        }
        switch registered {
        case .success(let registeredID): id = registeredID
        case .failure(let stopped):
            promise.fail(stopped)  // completed all the same: NIO checks that no promise is dropped
            throw stopped
        }
        defer { _ = state.withLock { $0.waiting.removeValue(forKey: id) } }
        connection.query(query, logger: logger).cascade(to: promise)
        let deadline = connection.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            promise.fail(
                PersistenceError(
                    .ioError, "PostgreSQL did not answer within \(timeout); the connection is closed", file: store))
            let _: EventLoopFuture<Void> = connection.close()
        }
        defer { deadline.cancel() }
        return try promise.futureResult.wait()
    }

    /// The store stops: every statement still waited for fails with `error` (its connection closed), and every
    /// later one at once.
    func stop(_ error: PersistenceError) {
        let waiting = state.withLock { state -> [Waiting] in
            state.stopped = error
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for entry in waiting {
            entry.promise.fail(error)
            let _: EventLoopFuture<Void> = entry.connection.close()
        }
    }
}

extension TimeAmount {
    /// `duration` on NIO's clock (saturating at the largest amount).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self = .nanoseconds(overflow ? .max : scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue)
    }
}
