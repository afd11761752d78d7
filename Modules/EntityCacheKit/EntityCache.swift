#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A resource's data as a persistent cache keeps it: the response body as received, its header fields, and when
/// it was received (or last confirmed by a 304). ResourceKit runs the body through the resource's pipeline again on
/// a cache hit, so any pipeline — text, JSON, your models — is cached without encoding its output.
public struct CachedEntity: Sendable, Hashable {
    /// One header field.
    public struct Header: Sendable, Hashable {
        /// The field name, as received.
        public let name: String
        /// The value.
        public let value: String

        /// Makes a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The response body.
    public var body: Data
    /// The header fields, in order.
    public var headers: [Header]
    /// When the data was received or last confirmed unchanged.
    public var timestamp: Date

    /// Makes an entry.
    public init(body: Data, headers: [Header], timestamp: Date) {
        self.body = body
        self.headers = headers
        self.timestamp = timestamp
    }
}

/// Where a ``PersistentCache`` keeps entries: read, write, remove and re-timestamp them by key. Siesta's
/// `EntityCache`, for any storage.
///
/// The methods are synchronous and may block (they do file I/O): ``PersistentCache`` calls them on its own serial
/// work queue, never on a caller's thread, one at a time and in the order they were asked for. Implementations:
/// ``InMemoryEntityCache`` here, `SQLiteEntityCache` in SQLiteAdapter.
public protocol EntityCache: Sendable {
    /// The entry for `key`, or nil.
    func readEntity(forKey key: String) throws -> CachedEntity?
    /// Stores `entity` for `key`, replacing any entry.
    func writeEntity(_ entity: CachedEntity, forKey key: String) throws
    /// Sets the timestamp of the entry for `key`, if there is one.
    func updateEntityTimestamp(_ timestamp: Date, forKey key: String) throws
    /// Removes the entry for `key`, if there is one.
    func removeEntity(forKey key: String) throws
    /// Removes every entry.
    func removeAllEntities() throws
}
