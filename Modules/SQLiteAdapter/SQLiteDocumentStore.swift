public import DocumentStoreKit
import Foundation
import GRDB
import Logging
public import PersistenceKit
import TetherConcurrency

/// A `DocumentStore` in a SQLite file, through GRDB: a `DatabasePool` in WAL mode (readers never
/// wait for the writer), documents as JSON text queried with SQLite's JSON functions, the change feed from GRDB's
/// transaction observation.
///
/// The file is created with permissions 0600. A file that is not a database, or is damaged, is never moved or
/// deleted: opening fails with `PersistenceError.Kind.corrupt` naming it — your documents are
/// yours to recover.
///
/// ```swift
/// let store = try SQLiteDocumentStore(path: "/var/lib/app/documents.sqlite")
/// try await store.upsert(["_id": "a1", "store_id": "abc123", "name": "Pear"], into: "items")
/// ```
public final class SQLiteDocumentStore: DocumentStore {
    /// The database file.
    public let path: String
    /// The change feed.
    public let changes = ChangeFeed()
    let pool: DatabasePool
    let tracker: ChangeTracker
    let isClosed = LockedValue(false)
    let unreadable: UnreadableRows
    let publisher: ChangeLogPublisher
    let configuration: SQLiteConfiguration
    let indexes = DeclaredIndexList()
    /// How its connections wait for another process's lock; stopped by ``close()``.
    package let busyWait: BusyWait

    /// How many stored documents this store has met that no longer read as documents (written by another program,
    /// or by a version that allowed what this one refuses). Queries leave them out and each is logged once, with its
    /// collection and id; `document(id:in:)` throws `PersistenceError.Kind.corrupt` for it, and
    /// deleting it removes it. A row whose text is not JSON at all also fails queries that filter or sort on a
    /// field, since SQLite's JSON functions refuse it.
    public var unreadableDocumentCount: Int { unreadable.count }

    /// Opens (or creates) the store at `path`, upgrading its schema if it was written by an older version.
    ///
    /// - Throws: `PersistenceError` — `PersistenceError.Kind.missingDirectory`,
    ///   `PersistenceError.Kind.readOnly`, `PersistenceError.Kind.corrupt`,
    ///   `PersistenceError.Kind.cannotOpen` — with the file's path.
    public init(path: String, configuration: SQLiteConfiguration = SQLiteConfiguration()) throws(PersistenceKit
        .PersistenceError)
    {
        self.path = path
        busyWait = BusyWait(timeout: configuration.busyTimeout)
        pool = try SQLiteDatabase.open(
            path: path, configuration: configuration, schema: DocumentSchema.self, busyWait: busyWait)
        self.configuration = configuration
        unreadable = UnreadableRows(logger: configuration.logger, file: path)
        let opened: UInt64
        do {
            opened =
                try pool.read { db in try UInt64.fetchOne(db, sql: "SELECT value FROM tether_meta WHERE key = 'commit'")
                } ?? 0
            try pool.read { [indexes] db in try indexes.load(from: db) }
        } catch {
            throw PersistenceError.mapping(error, file: path)
        }
        publisher = ChangeLogPublisher(feed: changes, after: opened)
        tracker = ChangeTracker(publisher: publisher)
        pool.add(transactionObserver: tracker, extent: .observerLifetime)
        LifetimeTracking.made(self, "SQLite document store \(path)")
    }

    /// Runs `body` in a write transaction on GRDB's writer connection (see
    /// `DocumentStore.write(_:)`).
    public func write<T: Sendable>(_ body: @escaping @Sendable (any DocumentTransaction) throws -> T) async throws -> T
    {
        let (path, tracker, unreadable, publisher, indexes) = (path, tracker, unreadable, publisher, indexes)
        let (retention, minimumAge) = (configuration.changeLogRetention, configuration.changeLogMinimumAge)
        try checkOpen()
        do {
            return try await pool.write { db in
                let transaction = SQLiteTransaction(
                    db: db, file: path, tracker: tracker, unreadable: unreadable, indexes: indexes)
                defer { transaction.finish() }
                let result = try body(transaction)
                if tracker.hasIntents {
                    // Number the commit inside it, so that a reader's number and the change set's always agree.
                    let commit =
                        try UInt64.fetchOne(
                            db.cachedStatement(
                                sql: "UPDATE tether_meta SET value = value + 1 WHERE key = 'commit' RETURNING value"))
                        ?? 0
                    // Other processes' commits since the last one published here go to the feed first, in order.
                    let last = publisher.lastPublished
                    let preceding =
                        try commit > last + 1 ? SQLiteChangeLog.entries(after: last, before: commit, in: db) : []
                    let now = Date()
                    try SQLiteChangeLog.append(tracker.setCommit(commit, after: preceding), in: db, now: now)
                    if commit % 256 == 0 {
                        try SQLiteChangeLog.prune(in: db, now: now, retention: retention, minimumAge: minimumAge)
                    }
                }
                return result
            }
        } catch let error as DatabaseError {
            throw mapping(error)
        }
    }

    /// Runs `body` on a reader connection, in a snapshot of the last commit.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader) throws -> T) async throws -> T {
        let (path, unreadable, indexes) = (path, unreadable, indexes)
        try checkOpen()
        do {
            return try await pool.read { db in
                try body(SQLiteReader(db: db, file: path, unreadable: unreadable, indexes: indexes))
            }
        } catch let error as DatabaseError {
            throw mapping(error)
        }
    }

    /// Builds `index` as an expression index on the JSON paths the query compiler writes for it, and records it in
    /// the file; from then on, queries on its paths in this process use it (another process learns of it when it
    /// next opens the file). Readers go on while it is built (WAL); writers wait for it.
    public func createIndex(_ index: DocumentIndex) async throws {
        try checkOpen()
        guard !indexes.list.contains(index) else { return }
        do {
            try await pool.write { db in try DeclaredIndexList.create(index, in: db) }
        } catch let error as DatabaseError {
            throw mapping(error).adding(collection: index.collection)
        }
        indexes.add(index)
        configuration.logger.debug("index created", metadata: ["index": "\(index)", "file": "\(path)"])
    }

    /// The indexes declared on the file, in order.
    public func declaredIndexes() async throws -> [DocumentIndex] {
        indexes.list
    }

    /// Sets SQLite's `max_page_count`: a cap on the file's size (in pages of 4 KiB); writes beyond it fail with
    /// `PersistenceError.Kind.diskFull`, as on a full disk. Returns the cap in force.
    @discardableResult
    public func limitSize(toPages pages: Int) async throws -> Int {
        let pages = max(1, pages)  // an Int: PRAGMA takes no bound parameters, and no user text reaches it
        return try await pool.write { db in
            try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(pages)") ?? 0
        }
    }

    /// Runs `PRAGMA integrity_check`; returns its report (`["ok"]` for a sound file).
    public func integrityCheck() async throws -> [String] {
        try await pool.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// Closes the database: later operations fail with `PersistenceError.Kind.closed`, and the
    /// change feed ends. A write waiting for another process's lock gives up at once, failing with
    /// `PersistenceError.Kind.closed`, rather than wait out the busy timeout.
    public func close() throws {
        isClosed.withLock { $0 = true }
        busyWait.stop()
        changes.finish()
        do {
            try pool.close()
        } catch {
            throw PersistenceError.mapping(error, file: path)
        }
    }

    /// Ends every wait for another connection's lock, from now on: a write that finds the file locked fails at once
    /// with `PersistenceError.Kind.closed` instead of waiting out the busy timeout. For a shutdown, before the
    /// application's writers are stopped (a pipeline's service group does it as it begins to shut down); ``close()``
    /// does it too.
    public func stopWaitingForLocks() {
        busyWait.stop()
    }

    /// The error for an operation that failed with `error`: `closed` when the store closed while the operation
    /// waited for its connection (SQLite then reports a misuse of the closed handle, in words that say nothing of
    /// it), or when a write gave up waiting for a lock because the store is closing or shutting down.
    private func mapping(_ error: DatabaseError) -> PersistenceError {
        if isClosed.withLock({ $0 }) {
            return PersistenceError(
                .closed, "the store closed while the operation waited for its connection; nothing was done",
                file: path, cause: SendableDescription(error))
        }
        guard error.resultCode == .SQLITE_BUSY, busyWait.isStopped else {
            return PersistenceError.mapping(error, file: path)
        }
        return PersistenceError(
            .closed,
            "the store is closing: the write gave up waiting for another connection's lock; nothing was written",
            file: path)
    }

    private func checkOpen() throws(PersistenceKit.PersistenceError) {
        if isClosed.withLock({ $0 }) { throw PersistenceError(.closed, "the store is closed", file: path) }
    }
}
