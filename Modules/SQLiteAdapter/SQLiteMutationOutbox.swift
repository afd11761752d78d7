import Foundation
import GRDB
import Logging
public import MutationOutboxKit
public import PersistenceKit
import TetherConcurrency

/// A `MutationOutbox` in a SQLite file of its own: durable mutations survive a crash or a `kill -9` from the
/// moment `mutate` returns.
///
/// Each enqueue is one write transaction in WAL mode (`synchronous=NORMAL`): durable against the process dying at
/// any point; a power cut may lose the last few. Processes may share the file: each entry is held by the outbox
/// object that enqueued or took it, and another process takes it (``takePending()``) only once that one's process
/// has ended — or it has called ``close()``. A file that is not an outbox — or a damaged one — is refused and
/// left as it is: unlike a cache, what it holds exists nowhere else. An entry written by a newer version in a format
/// this one does not read is left in the file and logged, never sent or dropped.
///
/// ```swift
/// service.mutationConfiguration.outbox = try SQLiteMutationOutbox(path: directory + "/outbox.sqlite")
/// try service.resumeMutations()
/// ```
public final class SQLiteMutationOutbox: MutationOutbox {
    /// The database file.
    public let path: String
    let pool: DatabasePool
    let logger: Logger
    /// This object's name in the `owner` column: the process and a number of its own.
    let owner = "\(getpid()):\(UUID().uuidString)"
    private let isClosed = LockedValue(false)

    /// Opens (or creates) the outbox at `path`.
    ///
    /// - Throws: `PersistenceError` when the file cannot be opened or is not an outbox (`foreignFile`,
    ///   `corrupt`, `missingDirectory`, `readOnly`…), naming the file.
    public init(path: String, configuration: SQLiteConfiguration = SQLiteConfiguration()) throws(PersistenceKit
        .PersistenceError)
    {
        self.path = path
        self.logger = configuration.logger
        pool = try SQLiteDatabase.open(path: path, configuration: configuration, schema: OutboxSchema.self)
        LifetimeTracking.made(self, "SQLite mutation outbox \(path)")
    }

    /// Writes `entry` in one transaction; returns its sequence number.
    public func enqueue(_ entry: OutboxEntry) throws(PersistenceKit.PersistenceError) -> Int64 {
        try perform(key: entry.key) { pool in
            try pool.write { db in
                guard
                    try Bool.fetchOne(
                        db.cachedStatement(sql: "SELECT 1 FROM tether_outbox WHERE key = ?"), arguments: [entry.key])
                        == nil
                else {
                    throw PersistenceError(.duplicateID, "an outbox entry with this key exists already")
                }
                try db.cachedStatement(
                    sql: """
                        INSERT INTO tether_outbox (key, lane, format, body, details, owner) VALUES (?, ?, ?, ?, ?, ?)
                        """
                ).execute(arguments: [entry.key, entry.lane, OutboxEntry.format, entry.body, entry.details, owner])
                return db.lastInsertedRowID
            }
        }
    }

    /// The pending entries, in sequence order; those in a newer format are skipped, with a warning.
    public func pendingEntries() throws(PersistenceKit.PersistenceError) -> [OutboxEntry] {
        try entries(failed: false)
    }

    /// Takes, in one write transaction, the pending entries no live outbox object holds — their owner's process has
    /// ended, or they have none — with those this object holds already; returns them in sequence order.
    public func takePending() throws(PersistenceKit.PersistenceError) -> [OutboxEntry] {
        let owner = owner
        let taken = try perform(key: nil) { pool in
            try pool.write { db -> Set<Int64> in
                let rows = try Row.fetchAll(
                    db, sql: "SELECT sequence, owner FROM tether_outbox WHERE failure IS NULL ORDER BY sequence")
                var taken: Set<Int64> = []
                for row in rows {
                    let sequence: Int64 = row[0]
                    let holder: String? = row[1]
                    guard holder == owner || holder.map(Self.hasEnded) ?? true else { continue }
                    if holder != owner {
                        try db.cachedStatement(sql: "UPDATE tether_outbox SET owner = ? WHERE sequence = ?")
                            .execute(arguments: [owner, sequence])
                    }
                    taken.insert(sequence)
                }
                return taken
            }
        }
        return try entries(failed: false).filter { taken.contains($0.sequence) }
    }

    /// Whether the process named in `holder` ("<pid>:…") has ended; a holder that names none counts as ended.
    static func hasEnded(_ holder: String) -> Bool {
        guard let pid = holder.split(separator: ":").first.flatMap({ pid_t($0) }), pid > 0 else { return true }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Lets go of the entries this object holds, for another process (or object) to take, and closes the file:
    /// later calls fail with `closed`.
    public func close() throws(PersistenceKit.PersistenceError) {
        let owner = owner
        try perform(key: nil) { pool in
            try pool.write { db in
                try db.execute(sql: "UPDATE tether_outbox SET owner = NULL WHERE owner = ?", arguments: [owner])
            }
        }
        isClosed.withLock { $0 = true }
        try? pool.close()
    }

    /// The failed entries, in sequence order.
    public func failedEntries() throws(PersistenceKit.PersistenceError) -> [OutboxEntry] {
        try entries(failed: true)
    }

    /// Removes the entry with `key`.
    public func remove(key: String) throws(PersistenceKit.PersistenceError) {
        try perform(key: key) { pool in
            try pool.write { db in
                try db.cachedStatement(sql: "DELETE FROM tether_outbox WHERE key = ?").execute(arguments: [key])
            }
        }
    }

    /// Moves the entry with `key` to the failed list.
    public func markFailed(key: String, reason: String) throws(PersistenceKit.PersistenceError) {
        try perform(key: key) { pool in
            try pool.write { db in
                try db.cachedStatement(sql: "UPDATE tether_outbox SET failure = ? WHERE key = ?")
                    .execute(arguments: [reason, key])
            }
        }
    }

    /// Removes every failed entry.
    public func removeFailedEntries() throws(PersistenceKit.PersistenceError) {
        try perform(key: nil) { pool in
            try pool.write { db in try db.execute(sql: "DELETE FROM tether_outbox WHERE failure IS NOT NULL") }
        }
    }

    /// Sets SQLite's `max_page_count`, a cap on the file's size in pages of 4 KiB: an enqueue beyond it fails with
    /// `PersistenceError.Kind.diskFull`, as on a full disk. Returns the cap in force.
    @discardableResult
    public func limitSize(toPages pages: Int) throws(PersistenceKit.PersistenceError) -> Int {
        let pages = max(1, pages)  // an Int: PRAGMA takes no bound parameters, and no user text reaches it
        return try perform(key: nil) { pool in
            try pool.write { db in try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(pages)") ?? 0 }
        }
    }

    private func entries(failed: Bool) throws(PersistenceKit.PersistenceError) -> [OutboxEntry] {
        let rows = try perform(key: nil) { pool in
            try pool.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT sequence, key, lane, format, body, details, failure FROM tether_outbox
                        WHERE failure IS \(failed ? "NOT " : "")NULL ORDER BY sequence
                        """)
            }
        }
        return rows.compactMap { row in
            let key: String = row["key"]
            do throws(PersistenceKit.PersistenceError) {
                return try OutboxEntry(
                    sequence: row["sequence"], key: key, lane: row["lane"], body: row["body"], failure: row["failure"],
                    details: row["details"], format: row["format"])
            } catch {
                logger.warning(
                    "an outbox entry is left unread",
                    metadata: ["file": "\(path)", "key": "\(key)", "reason": "\(error.message)"])
                return nil
            }
        }
    }

    private func perform<T>(key: String?, _ body: (DatabasePool) throws -> T) throws(PersistenceKit.PersistenceError)
        -> T
    {
        do {
            return try body(pool)
        } catch {
            throw PersistenceError.mapping(error, file: path, id: key)
        }
    }
}
