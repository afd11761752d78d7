// The examples of Docs/Persistence.md, compiled (see OwnershipKitSnippets.swift).
import DocumentStoreKit
import EntityCacheKit
import ResourceKit
import SQLiteAdapter
import Testing
import TetherJSON
import TetherTesting

enum PersistenceSnippets {
    static func open(dataDirectory: String) throws -> (PersistentCache, SQLiteDocumentStore) {
        // snippet: Persistence.open
        let cache = try PersistentCache.sqlite(path: "\(dataDirectory)/cache.sqlite")
        let store = try SQLiteDocumentStore(path: "\(dataDirectory)/documents.sqlite")
        // end snippet
        return (cache, store)
    }

    static func pointAtCache(service: Service, cache: PersistentCache) {
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

/// Your own store, as the conformance example runs it (here: the in-memory one).
typealias MyDocumentStore = InMemoryDocumentStore

// snippet: Persistence.conformance
@Test(arguments: DocumentStoreConformance.checks)
func conformance(_ check: DocumentStoreCheck) async throws {
    try await check.run(on: MyDocumentStore())
}
// end snippet
