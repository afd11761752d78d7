public import EntityCacheKit
public import Foundation
public import PersistenceKit
import PostgresNIO

/// An `EntityCache` in PostgreSQL, shared by every instance of a service that uses the same database and schema:
/// what one instance fetched, the others read; a `304 Not Modified` seen by one refreshes the entry's timestamp for
/// all.
///
/// `EntityCache` is synchronous: EntityCacheKit's `PersistentCache` calls it on its own serial work queue, never on
/// Swift concurrency's threads, and each call waits there for PostgreSQL's answer on one connection of the cache's
/// own — opened at the first call, opened again after it is lost. A failed call throws a `PersistenceError` (which
/// `PersistentCache` logs and treats as a miss); nothing already stored is lost.
///
/// ```swift
/// let cache = PersistentCache(try PostgresEntityCache(url: "postgres://app@db.internal/app?sslmode=verify-full"))
/// service.configure { $0.persistentCache = cache }
/// ```
public final class PostgresEntityCache: EntityCache, CustomStringConvertible {
    /// Where it connects (never the password).
    public let configuration: PostgresConfiguration
    private let table: String
    private let connection: DedicatedConnection

    /// Makes a cache; it connects at its first use.
    ///
    /// - Throws: `PersistenceError.Kind.cannotOpen` naming the setting that cannot work.
    public init(configuration: PostgresConfiguration) throws(PersistenceError) {
        try configuration.validate()
        self.configuration = configuration
        let table = "\(configuration.schema).tether_entities"
        self.table = table
        connection = DedicatedConnection(
            "the cache", configuration: configuration,
            preparation: [
                """
                CREATE TABLE IF NOT EXISTS \(table) (key text PRIMARY KEY, body bytea NOT NULL,
                    headers text NOT NULL, timestamp double precision NOT NULL)
                """
            ])
    }

    /// Makes a cache from a URL (see ``PostgresConfiguration/init(url:)``).
    public convenience init(url: String) throws(PersistenceError) {
        try self.init(configuration: PostgresConfiguration(url: url))
    }

    /// `PostgreSQL entity cache postgres://user@host:port/database`.
    public var description: String { "PostgreSQL entity cache \(configuration)" }

    /// The entry for `key`, or nil.
    public func readEntity(forKey key: String) throws -> CachedEntity? {
        var binds = PostgresBindings()
        binds.append(key)
        let rows = try run(
            "SELECT body, headers, timestamp FROM \(table) WHERE key = $1", binds, key: key)
        guard let row = rows.first(where: { _ in true }) else { return nil }
        do {
            let (body, headers, timestamp) = try row.decode((Data, String, Double).self)
            return CachedEntity(
                body: body, headers: CachedEntity.decodeHeaders(headers),
                timestamp: Date(timeIntervalSince1970: timestamp))
        } catch {
            throw PersistenceError(
                .corrupt, "the cache entry does not read as one: \(error)", file: configuration.description, id: key,
                cause: error)
        }
    }

    /// Stores `entity` for `key`, replacing what was there.
    public func writeEntity(_ entity: CachedEntity, forKey key: String) throws {
        var binds = PostgresBindings()
        binds.append(key)
        try binds.append(entity.body)
        binds.append(CachedEntity.encodeHeaders(entity.headers))
        binds.append(entity.timestamp.timeIntervalSince1970)
        try run(
            """
            INSERT INTO \(table) (key, body, headers, timestamp) VALUES ($1, $2, $3, $4)
            ON CONFLICT (key) DO UPDATE SET body = excluded.body, headers = excluded.headers,
                timestamp = excluded.timestamp
            """, binds, key: key)
    }

    /// Sets the timestamp of the entry for `key` (for every instance sharing the cache).
    public func updateEntityTimestamp(_ timestamp: Date, forKey key: String) throws {
        var binds = PostgresBindings()
        binds.append(timestamp.timeIntervalSince1970)
        binds.append(key)
        try run("UPDATE \(table) SET timestamp = $1 WHERE key = $2", binds, key: key)
    }

    /// Removes the entry for `key`.
    public func removeEntity(forKey key: String) throws {
        var binds = PostgresBindings()
        binds.append(key)
        try run("DELETE FROM \(table) WHERE key = $1", binds, key: key)
    }

    /// Removes every entry.
    public func removeAllEntities() throws {
        try run("DELETE FROM \(table)", PostgresBindings(), key: nil)
    }

    /// The number of entries.
    public func count() throws -> Int {
        let rows = try run("SELECT count(*) FROM \(table)", PostgresBindings(), key: nil)
        return try rows.first(where: { _ in true }).map { Int(try $0.decode(Int64.self)) } ?? 0
    }

    /// Closes the connection: later calls fail with `PersistenceError.Kind.closed`.
    public func close() {
        connection.close()
    }

    /// Runs one statement on the cache's connection.
    @discardableResult
    private func run(_ sql: String, _ binds: PostgresBindings, key: String?) throws -> PostgresQueryResult {
        try connection.run(sql, binds, id: key)
    }
}
