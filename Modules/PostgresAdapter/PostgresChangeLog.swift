import DocumentStoreKit
import PostgresNIO

/// The change log in PostgreSQL: what one process's commits tell the others (see `ChangeLogEntry`), the same log the
/// SQLite store keeps in its file.
///
/// - Every commit appends its entry in its own transaction (``append(_:)``), and sends a `NOTIFY` carrying its
///   number — only a wake-up: a listener that misses it still finds the entry.
/// - Commit numbers come from one counter row, taken under its row lock by every writer, so they count up by one in
///   commit order: a reader that sees commit n sees every commit before it.
/// - A listener reads the entries after the last commit it published (``entries(after:before:limit:)``) and registers
///   its position (``register(_:position:)``); ``prune(retention:minimumAge:)`` deletes what every live listener has
///   passed.
struct PostgresChangeLog {
    let session: PostgresSession
    let schema: PostgresSchema

    /// Appends `entry` and wakes the listeners, inside the commit's transaction.
    func append(_ entry: ChangeLogEntry) throws {
        var binds = PostgresBindings()
        binds.append(Int64(entry.commit))
        binds.append(entry.encodedChanges)
        try session.run(
            PostgresQuery(
                unsafeSQL: "INSERT INTO \(schema.changeLog) (commit_number, changes) VALUES ($1, $2)", binds: binds))
        var notify = PostgresBindings()
        notify.append(schema.channel)
        notify.append(String(entry.commit))
        try session.run(PostgresQuery(unsafeSQL: "SELECT pg_notify($1, $2)", binds: notify))
    }

    /// The entries after `commit` (and before `end`, when given), in commit order, at most `limit`.
    func entries(after commit: UInt64, before end: UInt64? = nil, limit: Int = 10_000) throws -> [ChangeLogEntry] {
        var binds = PostgresBindings()
        binds.append(Int64(commit))
        binds.append(Int64(clamping: end ?? UInt64(Int64.max)))
        binds.append(Int64(limit))
        let rows = try session.run(
            PostgresQuery(
                unsafeSQL: """
                    SELECT commit_number, changes FROM \(schema.changeLog)
                    WHERE commit_number > $1 AND commit_number < $2 ORDER BY commit_number LIMIT $3
                    """, binds: binds))
        var entries: [ChangeLogEntry] = []
        for row in rows {
            let (number, changes) = try row.decode((Int64, String).self)
            entries.append(try ChangeLogEntry(commit: UInt64(number), encodedChanges: changes))
        }
        return entries
    }

    /// Records that `reader` has published every commit up to `position`, now.
    func register(_ reader: String, position: UInt64) throws {
        var binds = PostgresBindings()
        binds.append(reader)
        binds.append(Int64(position))
        try session.run(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(schema.readers) (reader, position, seen_at) VALUES ($1, $2, now())
                    ON CONFLICT (reader) DO UPDATE SET position = excluded.position, seen_at = excluded.seen_at
                    """, binds: binds))
    }

    func unregister(_ reader: String) throws {
        var binds = PostgresBindings()
        binds.append(reader)
        try session.run(PostgresQuery(unsafeSQL: "DELETE FROM \(schema.readers) WHERE reader = $1", binds: binds))
    }

    /// Deletes the entries that every listener seen within `retention` has passed and that are older than
    /// `minimumAge`, at most `batch` of the oldest per call, and forgets listeners not seen within `retention`.
    func prune(retention: Duration, minimumAge: Duration, batch: Int64 = 4096) throws {
        var forget = PostgresBindings()
        forget.append(retention.seconds)
        try session.run(
            PostgresQuery(
                unsafeSQL: "DELETE FROM \(schema.readers) WHERE seen_at < now() - make_interval(secs => $1)",
                binds: forget))
        var binds = PostgresBindings()
        binds.append(batch)
        binds.append(minimumAge.seconds)
        try session.run(
            PostgresQuery(
                unsafeSQL: """
                    DELETE FROM \(schema.changeLog) WHERE commit_number <= LEAST(
                        (SELECT MIN(commit_number) FROM \(schema.changeLog)) + $1 - 1,
                        COALESCE((SELECT MIN(position) FROM \(schema.readers)), 9223372036854775807))
                    AND written_at < now() - make_interval(secs => $2)
                    """, binds: binds))
    }

    /// How many entries the log holds.
    func count() throws -> Int {
        let rows = try session.run(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(schema.changeLog)"))
        return try rows.first { _ in true }.map { Int(try $0.decode(Int64.self)) } ?? 0
    }
}

extension Duration {
    /// The duration in seconds, as PostgreSQL's `make_interval(secs => …)` takes it.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
