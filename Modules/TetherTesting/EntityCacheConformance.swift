import Dispatch
public import EntityCacheKit
import Foundation
import PersistenceKit

/// The rules every `EntityCache` must follow, as checks any cache can run — ours (in memory, SQLite, PostgreSQL) or
/// yours. Each check gets a fresh, empty cache, and calls it on a dispatch queue, as `PersistentCache` does (an
/// `EntityCache` may wait for its storage; Swift concurrency's threads must not).
///
/// ```swift
/// @Test(arguments: EntityCacheConformance.checks)
/// func conformance(_ check: EntityCacheCheck) async throws {
///     try await check.run(on: MyEntityCache(…))
/// }
/// ```
public enum EntityCacheConformance {
    /// Every check.
    public static let checks: [EntityCacheCheck] = [
        EntityCacheCheck("round-trip", "an entry reads back exactly: every byte, the headers in order, the timestamp") {
            cache in
            var bytes = Data((0..<256).map { UInt8($0) })
            bytes.append(Data(repeating: 0, count: 1_000))
            let entity = CachedEntity(
                body: bytes,
                headers: [
                    .init(name: "ETag", value: "\"v1\""), .init(name: "Set-Cookie", value: "a=1"),
                    .init(name: "Set-Cookie", value: "b=2"), .init(name: "X-Empty", value: ""),
                    .init(name: "X-Unicode", value: "Grüße, 世界"),
                ],
                timestamp: Date(timeIntervalSince1970: 1_790_000_000.25))
            try cache.writeEntity(entity, forKey: "https://example.com/a?b=c")
            let read = try cache.readEntity(forKey: "https://example.com/a?b=c")
            try require(read == entity, "read \(String(describing: read)), wrote \(entity)")
            try require(try cache.readEntity(forKey: "https://example.com/other") == nil, "a missing key reads nil")
            let empty = CachedEntity(body: Data(), headers: [], timestamp: Date(timeIntervalSince1970: 0))
            try cache.writeEntity(empty, forKey: "empty")
            try require(try cache.readEntity(forKey: "empty") == empty, "an empty body and no headers read back")
        },
        EntityCacheCheck("large-body", "a 4 MB body reads back whole") { cache in
            let body = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try cache.writeEntity(CachedEntity(body: body, headers: [], timestamp: Date()), forKey: "large")
            try require(try cache.readEntity(forKey: "large")?.body == body, "the 4 MB body changed")
        },
        EntityCacheCheck("overwrite", "writing a key again replaces its entry whole") { cache in
            let first = CachedEntity(
                body: Data("one".utf8), headers: [.init(name: "ETag", value: "1")],
                timestamp: Date(timeIntervalSince1970: 100))
            let second = CachedEntity(body: Data("two".utf8), headers: [], timestamp: Date(timeIntervalSince1970: 200))
            try cache.writeEntity(first, forKey: "k")
            try cache.writeEntity(second, forKey: "k")
            try require(try cache.readEntity(forKey: "k") == second, "the second write did not replace the first")
        },
        EntityCacheCheck("timestamp", "updating the timestamp changes only it; for a missing key it creates nothing") {
            cache in
            let entity = CachedEntity(
                body: Data("x".utf8), headers: [.init(name: "ETag", value: "1")],
                timestamp: Date(timeIntervalSince1970: 100))
            try cache.writeEntity(entity, forKey: "k")
            try cache.updateEntityTimestamp(Date(timeIntervalSince1970: 500.5), forKey: "k")
            var expected = entity
            expected.timestamp = Date(timeIntervalSince1970: 500.5)
            try require(try cache.readEntity(forKey: "k") == expected, "only the timestamp changes")
            try cache.updateEntityTimestamp(Date(), forKey: "missing")
            try require(try cache.readEntity(forKey: "missing") == nil, "updating a missing key created an entry")
        },
        EntityCacheCheck("remove", "remove takes one entry; removeAll takes every one; removing a missing key is fine")
        {
            cache in
            let entity = CachedEntity(body: Data("x".utf8), headers: [], timestamp: Date(timeIntervalSince1970: 1))
            for key in ["a", "b", "c"] { try cache.writeEntity(entity, forKey: key) }
            try cache.removeEntity(forKey: "b")
            try cache.removeEntity(forKey: "never-written")
            try require(try cache.readEntity(forKey: "b") == nil, "b was removed")
            try require(try cache.readEntity(forKey: "a") == entity, "a stays")
            try cache.removeAllEntities()
            for key in ["a", "c"] {
                try require(try cache.readEntity(forKey: key) == nil, "\(key) is gone after removeAll")
            }
        },
        EntityCacheCheck("hostile-keys", "any key is only a key: quotes, SQL, Unicode, 4,000 characters") { cache in
            let keys = [
                "'; DROP TABLE tether_entities; --", "\"quoted\"", "%_\\", "Grüße/世界",
                String(repeating: "k", count: 4_000),
                "https://example.com/?q=' OR '1'='1",
            ]
            for (index, key) in keys.enumerated() {
                let entity = CachedEntity(
                    body: Data("\(index)".utf8), headers: [], timestamp: Date(timeIntervalSince1970: Double(index)))
                try cache.writeEntity(entity, forKey: key)
            }
            for (index, key) in keys.enumerated() {
                try require(
                    try cache.readEntity(forKey: key)?.body == Data("\(index)".utf8),
                    "the key \(key.prefix(40)) reads back")
            }
        },
    ]
}

/// One rule, runnable against a cache.
public struct EntityCacheCheck: Sendable, CustomStringConvertible {
    /// A short name (`round-trip`).
    public let name: String
    /// What the rule says.
    public let rule: String
    let body: @Sendable (any EntityCache) throws -> Void

    init(_ name: String, _ rule: String, body: @escaping @Sendable (any EntityCache) throws -> Void) {
        self.name = name
        self.rule = rule
        self.body = body
    }

    /// Runs the check on a dispatch queue of its own.
    ///
    /// - Throws: ``DocumentStoreConformanceFailure`` saying what the cache did instead, or what the cache threw.
    public func run(on cache: any EntityCache) async throws {
        let body = body
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue(label: "tether.testing.entity-cache-check").async {
                continuation.resume(with: Result { try body(cache) })
            }
        }
    }

    /// The name.
    public var description: String { name }
}
