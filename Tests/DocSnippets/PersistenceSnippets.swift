// The examples of Docs/Persistence.md, compiled (see OwnershipKitSnippets.swift).
import DocumentStoreKit
import EntityCacheKit
import Foundation
import LiveQueryKit
import Logging
import PostgresAdapter
import ResourceKit
import SQLiteAdapter
import ServiceLifecycle
import Testing
import TetherJSON
import TetherTesting
import UnixSignals

enum PersistenceSnippets {
    static func open(dataDirectory: String) throws -> (PersistentCache, SQLiteDocumentStore) {
        // snippet: Persistence.open
        let cache = try PersistentCache.sqlite(path: "\(dataDirectory)/cache.sqlite")
        let store = try SQLiteDocumentStore(path: "\(dataDirectory)/documents.sqlite")
        // end snippet
        return (cache, store)
    }

    static func pointAtCache(service: ResourceKit.Service, cache: PersistentCache) {
        // snippet: Persistence.configure
        service.configure { $0.persistentCache = cache }
        service.configure("/session/**") { $0.persistentCache = nil }
        // end snippet
    }

    static func write(store: any DocumentStore) async throws -> [StoredDocument] {
        // snippet: Persistence.write
        try await store.write { transaction in
            try transaction.upsert(["_id": "a1", "store_id": "abc123", "name": "Pear"], into: "items")
            try transaction.remove(id: "a0", from: "items")
        }
        let query = try DocumentQuery(
            collection: "items", predicate: .compare(try DocumentPath("store_id"), .equal, .string("abc123")),
            sort: [DocumentSort(try DocumentPath("name"))], limit: 20)
        let items = try await store.documents(matching: query)
        // end snippet
        return items
    }

    static func follow(store: any DocumentStore) -> ChangeSubscription {
        // snippet: Persistence.changes
        let subscription = store.changes.subscribe { changes in
            print(changes.commits, changes.changes)  // [(collection, id): .inserted / .updated / .removed]
        }
        // end snippet
        return subscription
    }
}

extension PersistenceSnippets {
    static func postgres(app: some ServiceLifecycle.Service, logger: Logger) async throws {
        // snippet: Persistence.postgres
        var configuration = try PostgresConfiguration(url: "postgres://app@db.internal:5432/app?sslmode=verify-full")
        configuration.password = ProcessInfo.processInfo.environment["APP_DB_PASSWORD"]
        let documents = try PostgresDocumentStore(configuration: configuration)
        let store = Store(documents)  // live queries, as on SQLite
        let cache = PersistentCache(try PostgresEntityCache(configuration: configuration))
        // end snippet
        _ = (store, cache)
        // snippet: Persistence.postgres-run
        let group = ServiceGroup(services: [documents, app], gracefulShutdownSignals: [.sigterm], logger: logger)
        try await group.run()  // on SIGTERM: no new writes, the ones in flight finish, then it stops
        // end snippet
    }
}

/// Your own store, as the conformance example runs it (here: the in-memory one).
typealias MyDocumentStore = InMemoryDocumentStore

// snippet: Persistence.conformance
@Test(arguments: DocumentStoreConformance.checks)
func conformance(_ check: DocumentStoreCheck) async throws {
    try await check.run(on: MyDocumentStore())
}
// end snippet
