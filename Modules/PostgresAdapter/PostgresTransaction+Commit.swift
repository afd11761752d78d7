import DocumentStoreKit
import NIOCore
import PersistenceKit
import PostgresNIO

extension PostgresTransaction {
    /// Runs `body` in a transaction on `session` and commits it, numbering the commit and appending its change-log
    /// entry inside it; rolls back when anything throws. Returns `body`'s result and the entries to publish, in
    /// order: other processes' commits since the last one `publisher` published, then this one's (none when the
    /// transaction changed nothing).
    ///
    /// Writers are serialized — in this process and across processes — by the lock on the commit counter's row,
    /// taken first: each sees the others' committed work, and commit numbers count up in commit order.
    static func perform<T>(
        _ body: (any DocumentTransaction) throws -> T, session: PostgresSession, schema: PostgresSchema,
        indexes: DeclaredIndexList, publisher: ChangeLogPublisher, configuration: PostgresConfiguration
    ) throws -> (T, [ChangeLogEntry]) {
        try session.run("BEGIN")
        do {
            try session.run(
                PostgresQuery(unsafeSQL: "SELECT value FROM \(schema.meta) WHERE key = 'commit' FOR UPDATE"))
            let transaction = PostgresTransaction(
                reader: PostgresReader(session: session, schema: schema, indexes: indexes))
            defer { transaction.finish() }
            let result = try body(transaction)
            var entries: [ChangeLogEntry] = []
            if !transaction.changes.isEmpty {
                let rows = try session.run(
                    PostgresQuery(
                        unsafeSQL: "UPDATE \(schema.meta) SET value = value + 1 WHERE key = 'commit' RETURNING value"))
                let commit = UInt64(try rows.first(where: { _ in true }).map { try $0.decode(Int64.self) } ?? 0)
                let log = PostgresChangeLog(session: session, schema: schema)
                // Other processes' commits since the last one published here go to the feed first, in order.
                let last = publisher.lastPublished
                if commit > last + 1 { entries = try log.entries(after: last, before: commit) }
                let entry = transaction.entry(commit: commit)
                try log.append(entry)
                entries.append(entry)
                if commit % 256 == 0 {
                    try log.prune(
                        retention: configuration.changeLogRetention, minimumAge: configuration.changeLogMinimumAge)
                }
            }
            try session.run("COMMIT")
            return (result, entries)
        } catch {
            // Always, cancelled or not: the connection goes back to the pool with no transaction open.
            if (try? session.unlessCancelled("ROLLBACK")) == nil {
                let _: EventLoopFuture<Void> = session.connection.close()
            }
            throw error
        }
    }
}
