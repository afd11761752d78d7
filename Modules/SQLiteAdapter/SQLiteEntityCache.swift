public import EntityCacheKit
public import Foundation
import GRDB
import Logging
public import PersistenceKit
import TetherConcurrency

/// An `EntityCache` in a SQLite file: what lets an EntityCacheKit `PersistentCache` survive
/// restarts.
///
/// The cache is disposable. A file that is not a database or is damaged — found when opening, or by any later
/// operation — is moved aside (renamed `<file>.corrupt-<milliseconds>`), a new empty one takes its place, and a
/// warning is logged. The file is created with permissions 0600.
///
/// ```swift
/// let cache = PersistentCache(try SQLiteEntityCache(path: cachesDirectory + "/tether-cache.sqlite"))
/// service.configure { $0.persistentCache = cache }
/// ```
public final class SQLiteEntityCache: EntityCache {
    /// The database file.
    public let path: String
    let configuration: SQLiteConfiguration
    let pool: LockedValue<DatabasePool>
    let movedAside = LockedValue<[String]>([])

    /// Opens (or creates) the cache at `path`, replacing a damaged file.
    ///
    /// - Throws: `PersistenceError` when the file cannot be opened or created at all
    ///   (`PersistenceError.Kind.missingDirectory`, `PersistenceError.Kind.readOnly`).
    public init(path: String, configuration: SQLiteConfiguration = SQLiteConfiguration()) throws(PersistenceKit
        .PersistenceError)
    {
        self.path = path
        self.configuration = configuration
        var moved: [String] = []
        // Only a file that is recognisably a Tether cache — its schema says so — is ever moved aside; anything else
        // at the path (another database, a text file, a file whose schema cannot be read) is refused, untouched.
        let inspection = DatabaseInspection.inspect(
            path, as: EntityCacheSchema.self, quickCheck: configuration.checksIntegrityOnOpen)
        if case .damaged(let report) = inspection {
            let aside = try DatabaseFile.moveAside(path)
            moved.append(aside)
            configuration.logger.warning(
                "the cache file was damaged; moved it aside and started an empty cache",
                metadata: ["file": "\(path)", "movedTo": "\(aside)", "error": "\(report)"])
        } else if let refusal = inspection.refusal(path, role: "cache") {
            throw PersistenceError(
                refusal.kind == .corrupt ? .foreignFile : refusal.kind,
                refusal.message + " — only a file recognisably Tether's cache is ever replaced", file: path)
        }
        let opened = try SQLiteDatabase.open(
            path: path, configuration: configuration, schema: EntityCacheSchema.self,
            inspected: moved.isEmpty ? inspection : .new)
        pool = LockedValue(opened)
        movedAside.withLock { $0 = moved }
        LifetimeTracking.made(self, "SQLite entity cache \(path)")
    }

    /// Where damaged files were moved, oldest first.
    public var movedAsideFiles: [String] {
        movedAside.withLock { $0 }
    }

    /// The entry for `key`, or nil.
    public func readEntity(forKey key: String) throws -> CachedEntity? {
        try perform(key: key) { pool in
            try pool.read { db in
                guard
                    let row = try Row.fetchOne(
                        db.cachedStatement(sql: "SELECT body, headers, timestamp FROM tether_entities WHERE key = ?"),
                        arguments: [key])
                else { return nil }
                let headers: String = row[1]
                let timestamp: Double = row[2]
                return CachedEntity(
                    body: row[0], headers: CachedEntity.decodeHeaders(headers),
                    timestamp: Date(timeIntervalSince1970: timestamp))
            }
        }
    }

    /// Stores `entity` for `key`.
    public func writeEntity(_ entity: CachedEntity, forKey key: String) throws {
        try perform(key: key) { pool in
            try pool.write { db in
                try db.cachedStatement(
                    sql: "INSERT OR REPLACE INTO tether_entities (key, body, headers, timestamp) VALUES (?, ?, ?, ?)"
                ).execute(arguments: [
                    key, entity.body, CachedEntity.encodeHeaders(entity.headers),
                    entity.timestamp.timeIntervalSince1970,
                ])
            }
        }
    }

    /// Sets the timestamp of the entry for `key`.
    public func updateEntityTimestamp(_ timestamp: Date, forKey key: String) throws {
        try perform(key: key) { pool in
            try pool.write { db in
                try db.cachedStatement(sql: "UPDATE tether_entities SET timestamp = ? WHERE key = ?")
                    .execute(arguments: [timestamp.timeIntervalSince1970, key])
            }
        }
    }

    /// Removes the entry for `key`.
    public func removeEntity(forKey key: String) throws {
        try perform(key: key) { pool in
            try pool.write { db in
                try db.cachedStatement(sql: "DELETE FROM tether_entities WHERE key = ?").execute(arguments: [key])
            }
        }
    }

    /// Removes every entry.
    public func removeAllEntities() throws {
        try perform(key: nil) { pool in
            try pool.write { db in try db.execute(sql: "DELETE FROM tether_entities") }
        }
    }

    /// The number of entries.
    public func count() throws -> Int {
        try perform(key: nil) { pool in
            try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM tether_entities") ?? 0 }
        }
    }

    /// Runs `body` on the pool; a damaged file found on the way is replaced, and the operation fails.
    func perform<T>(key: String?, _ body: (DatabasePool) throws -> T) throws(PersistenceError) -> T {
        let current = pool.withLock { $0 }
        do {
            return try body(current)
        } catch {
            let mapped = PersistenceError.mapping(error, file: path, id: key)
            if mapped.kind == .corrupt { try replaceDamagedFile(current, error: mapped) }
            throw mapped
        }
    }

    func replaceDamagedFile(_ damaged: DatabasePool, error: PersistenceError) throws(PersistenceKit.PersistenceError) {
        try? damaged.close()
        let aside = try DatabaseFile.moveAside(path)
        movedAside.withLock { $0.append(aside) }
        configuration.logger.warning(
            "the cache file was damaged; moved it aside and started an empty cache",
            metadata: ["file": "\(path)", "movedTo": "\(aside)", "error": "\(error.message)"])
        let fresh = try SQLiteDatabase.open(
            path: path, configuration: configuration, schema: EntityCacheSchema.self)
        pool.withLock { $0 = fresh }
    }
}
