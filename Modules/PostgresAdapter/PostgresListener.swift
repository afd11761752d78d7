import DocumentStoreKit
import Foundation
import Logging
import PersistenceKit
import PostgresNIO

/// Brings other processes' commits into a store's change feed: `LISTEN`s on the schema's channel on a connection of
/// its own, and reads the change log after the last commit published whenever a notification comes, every
/// `catchUpInterval` (the safety net: a notification sent while it was away is gone), and at once after each
/// (re)connection. A lost connection is retried with growing delays; nothing is lost meanwhile, as the log keeps
/// every entry until every live listener has passed it.
struct PostgresListener: Sendable {
    let store: PostgresDocumentStore
    let publisher: ChangeLogPublisher
    /// This listener's row in `tether_change_log_readers`.
    let reader = UUID().uuidString

    private var configuration: PostgresConfiguration { store.configuration }
    private var logger: Logger { store.configuration.logger }

    /// Listens until cancelled.
    func run() async throws {
        var delay = configuration.reconnectDelay
        var failures = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: PostgresConnectionConfigurations.connection(configuration), id: 0, logger: logger)
                store.counters.count(\.listenerConnections)
                do {
                    try await connection.listen(on: store.schema.channel) { notifications in
                        // Back only once the log can be read too: a listening connection beside a pool that
                        // cannot serve is still a failure, retried with growing delays.
                        try await catchUp()
                        if failures > 0 {
                            logger.notice(
                                "listener reconnected; caught up from the change log",
                                metadata: ["store": "\(configuration)", "failures": "\(failures)"])
                        }
                        (delay, failures) = (configuration.reconnectDelay, 0)
                        try await follow(notifications)
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled || error is CancellationError { return }
                failures += 1
                logger.warning(
                    "listener lost its connection; retrying, and catching up from the change log once back",
                    metadata: [
                        "store": "\(configuration)",
                        "error": "\(PersistenceError.mappingPostgres(error, store: "\(configuration)"))",
                        "retryIn": "\(delay)",
                    ])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, configuration.maximumReconnectDelay)
            }
        }
    }

    /// Catches up on every notification and every `catchUpInterval`, until the notifications end
    /// (the connection is gone: it throws, and ``run()`` reconnects) or the task is cancelled.
    private func follow(_ notifications: PostgresNotificationSequence) async throws {
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await notification in notifications {
                    // The payload is the commit's number: this store's own commits, published at their commit,
                    // need no read of the log.
                    if let commit = UInt64(notification.payload), commit <= publisher.lastPublished { continue }
                    wake.yield()
                }
                throw PersistenceError(.ioError, "the listening connection ended")
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: configuration.catchUpInterval)
                    wake.yield()
                }
            }
            group.addTask {
                let clock = ContinuousClock()
                var registered: ContinuousClock.Instant?
                for await _ in wakes {
                    try await catchUp()
                    if registered.map({ clock.now - $0 >= .seconds(1) }) ?? true {
                        try await register()
                        registered = clock.now
                    }
                }
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Publishes every entry after the last commit published.
    func catchUp() async throws {
        let schema = store.schema
        while true {
            let after = publisher.lastPublished
            store.counters.count(\.catchUps)
            let entries = try await store.withSession { session in
                try PostgresChangeLog(session: session, schema: schema).entries(after: after)
            }
            let outcome = publisher.publish(entries)
            if let missing = outcome.missing {
                // Nothing is lost — they went to the feed as unknown changes, and live queries run again — but this
                // process was away longer than the log keeps entries for it: worth a line.
                logger.warning(
                    "commits were pruned from the change log before this process read them; live queries run again",
                    metadata: ["store": "\(configuration)", "commits": "\(missing.lowerBound)...\(missing.upperBound)"])
            }
            if entries.count < 10_000 { return }
        }
    }

    /// Says how far this process has read, and prunes what every live listener has passed.
    private func register() async throws {
        let (schema, reader, position, configuration) = (store.schema, reader, publisher.lastPublished, configuration)
        try await store.withSession { session in
            let log = PostgresChangeLog(session: session, schema: schema)
            try log.register(reader, position: position)
            try log.prune(retention: configuration.changeLogRetention, minimumAge: configuration.changeLogMinimumAge)
        }
    }

    /// No longer a reader: entries need not wait for this process.
    func unregister() async {
        let (schema, reader) = (store.schema, reader)
        _ = try? await store.withSession { session in
            try PostgresChangeLog(session: session, schema: schema).unregister(reader)
        }
    }
}
