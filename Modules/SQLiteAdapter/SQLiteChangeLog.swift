import DocumentStoreKit
import Foundation
import GRDB
import TetherClock

/// The change log in the SQLite file: what one process's commits tell the others (see `ChangeLogEntry`).
///
/// - Every commit appends its entry in its own transaction (``append(_:in:)``), so an entry exists exactly when its
///   commit does.
/// - A process reads the entries after the last commit it published (``entries(after:before:in:)``): inside its own
///   writes, for the commits just before them, and in ``SQLiteDocumentStore/followOtherProcesses(checkingEvery:)``
///   while it only reads.
/// - A following reader registers its position; ``prune(in:now:retention:minimumAge:)`` deletes entries that every
///   live reader has passed and that are older than the minimum age. A reader not seen for `retention` no longer
///   holds entries back.
enum SQLiteChangeLog {
    static func append(_ entry: ChangeLogEntry, in db: Database, now: Date) throws {
        try db.cachedStatement(
            sql: "INSERT INTO tether_change_log (commit_number, changes, written_at) VALUES (?, ?, ?)"
        )
        .execute(arguments: [Int64(entry.commit), entry.encodedChanges, now.timeIntervalSince1970])
    }

    /// The entries after `commit` (and before `end`, when given), in commit order, at most `limit`.
    static func entries(
        after commit: UInt64, before end: UInt64? = nil, limit: Int = 10_000, in db: Database
    ) throws -> [ChangeLogEntry] {
        let statement = try db.cachedStatement(
            sql: """
                SELECT commit_number, changes FROM tether_change_log
                WHERE commit_number > ? AND commit_number < ? ORDER BY commit_number LIMIT ?
                """)
        let rows = try Row.fetchCursor(
            statement, arguments: [Int64(commit), Int64(clamping: end ?? UInt64(Int64.max)), limit])
        var entries: [ChangeLogEntry] = []
        while let row = try rows.next() {
            let number: Int64 = row[0]
            entries.append(try ChangeLogEntry(commit: UInt64(number), encodedChanges: row[1]))
        }
        return entries
    }

    /// Records that `reader` has published every commit up to `position`, now.
    static func register(_ reader: String, position: UInt64, in db: Database, now: Date) throws {
        try db.execute(
            sql: """
                INSERT INTO tether_change_log_readers (reader, position, seen_at) VALUES (?, ?, ?)
                ON CONFLICT (reader) DO UPDATE SET position = excluded.position, seen_at = excluded.seen_at
                """,
            arguments: [reader, Int64(position), now.timeIntervalSince1970])
    }

    static func unregister(_ reader: String, in db: Database) throws {
        try db.execute(sql: "DELETE FROM tether_change_log_readers WHERE reader = ?", arguments: [reader])
    }

    /// Deletes the entries that every reader seen within `retention` has passed and that are older than
    /// `minimumAge` (so that a process that opened the file a moment ago and is about to follow it still finds the
    /// commits since it opened), and forgets readers not seen within `retention`.
    ///
    /// At most `batch` of the oldest entries are looked at, through the primary key, so a prune costs the same
    /// however long the log (it runs every 256 commits, so it keeps up).
    static func prune(in db: Database, now: Date, retention: Duration, minimumAge: Duration, batch: Int64 = 4096) throws
    {
        let liveSince = now.timeIntervalSince1970 - retention.timeInterval
        try db.execute(sql: "DELETE FROM tether_change_log_readers WHERE seen_at < ?", arguments: [liveSince])
        guard let oldest = try Int64.fetchOne(db, sql: "SELECT MIN(commit_number) FROM tether_change_log") else {
            return
        }
        let passed = try Int64.fetchOne(db, sql: "SELECT MIN(position) FROM tether_change_log_readers") ?? Int64.max
        try db.execute(
            sql: "DELETE FROM tether_change_log WHERE commit_number <= ? AND written_at < ?",
            arguments: [min(passed, oldest + batch - 1), now.timeIntervalSince1970 - minimumAge.timeInterval])
    }

    /// How many entries the log holds (for tests and diagnostics).
    static func count(in db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM tether_change_log") ?? 0
    }
}
