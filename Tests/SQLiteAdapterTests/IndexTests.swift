import DocumentStoreKit
import Foundation
import GRDB
import PersistenceKit
import SQLiteAdapter
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Declared indexes: built as expression indexes on the very expressions the query compiler writes, so that SQLite
/// uses them — proven by its own query plan — and never changing a result.
@Suite("SQLite: declared indexes", .leakChecked)
struct IndexTests {
    /// `count` documents in `items`: 10 stores, names, prices, a nested city, tags, and a few of other types.
    static func fill(_ store: SQLiteDocumentStore, count: Int) async throws {
        try await store.write { transaction in
            for index in 0..<count {
                var body: [String: JSONValue] = [
                    "_id": .string(String(format: "d%05d", index)),
                    "store_id": .string("s\(index % 10)"),
                    "name": .string("item \(index % 97)"),
                    "price": .number(Double(index % 50)),
                    "address": ["city": .string("city \(index % 60)")],
                    "tags": .array([.string("t\(index % 4)"), .string("all")]),
                ]
                // Other types where strings and numbers are expected, as real data has.
                if index % 17 == 0 { body["store_id"] = .number(Double(index % 10)) }
                if index % 19 == 0 { body["name"] = .null }
                if index % 23 == 0 { body["price"] = .string("n/a") }
                try transaction.upsert(.object(body), into: "items")
            }
        }
    }

    /// SQLite's plan for `query` as the store would compile it, read on a connection of the test's own.
    static func plan(_ query: DocumentQuery, indexed: Set<DocumentPath>, file: String) throws -> String {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: file, configuration: configuration)
        let (sql, arguments) = SQLiteQueryCompiler.select(query, indexed: indexed)
        return try queue.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments)
                .map { $0["detail"] as String }.joined(separator: " | ")
        }
    }

    static func path(_ dotted: String) throws -> DocumentPath { try DocumentPath(dotted) }

    @Test(
        "An index on store_id, name serves equality, sort and limit — SQLite's plan says so — with every result unchanged"
    )
    func queryPlanAndResults() async throws {
        try await TemporaryDirectory.with { directory in
            let file = directory.file("store.sqlite")
            let store = try SQLiteDocumentStore(path: file)
            try await Self.fill(store, count: 2_000)
            let query = try DocumentQuery(
                collection: "items", predicate: .compare(Self.path("store_id"), .equal, .string("s3")),
                sort: [DocumentSort(Self.path("name"))], limit: 100)
            let before = try await store.read { try $0.documents(matching: query) }
            let unindexedPlan = try Self.plan(query, indexed: [], file: file)
            #expect(!unindexedPlan.contains("tether_idx_"), "\(unindexedPlan)")

            try await store.createIndex(DocumentIndex(collection: "items", fields: ["store_id", "name"]))
            let indexed: Set<DocumentPath> = [try Self.path("store_id"), try Self.path("name")]
            let plan = try Self.plan(query, indexed: indexed, file: file)
            #expect(plan.contains("SEARCH tether_documents USING INDEX tether_idx_items__store_id__name"), "\(plan)")
            let after = try await store.read { try $0.documents(matching: query) }
            #expect(after == before, "the index changes no result")
            #expect(after.count == 100)

            // A range on the second field, and membership in a list, use it too.
            let range = try DocumentQuery(
                collection: "items",
                predicate: .and([
                    .compare(Self.path("store_id"), .equal, .string("s1")),
                    .compare(Self.path("name"), .greater, .string("item 50")),
                ]))
            let rangePlan = try Self.plan(range, indexed: indexed, file: file)
            #expect(rangePlan.contains("USING INDEX tether_idx_items__store_id__name"), "\(rangePlan)")
            let list = try DocumentQuery(
                collection: "items", predicate: .isIn(Self.path("store_id"), [.string("s1"), .string("s2")]),
                sort: [DocumentSort(Self.path("name"))], limit: 20)
            let listPlan = try Self.plan(list, indexed: indexed, file: file)
            #expect(listPlan.contains("USING INDEX tether_idx_items__store_id__name"), "\(listPlan)")

            // The same answers as the in-memory store, which has no index, for every kind of condition.
            let oracle = InMemoryDocumentStore()
            let all = try await store.read { try $0.documents(matching: DocumentQuery(collection: "items")) }
            try await oracle.write { transaction in
                for document in all { try transaction.upsert(document.body, into: "items") }
            }
            let queries = try [
                query, range, list,
                DocumentQuery(
                    collection: "items", predicate: .compare(Self.path("store_id"), .equal, .number(3)),
                    sort: [DocumentSort(Self.path("name"), .descending)]),
                DocumentQuery(
                    collection: "items", predicate: .not(.compare(Self.path("store_id"), .notEqual, .string("s4"))),
                    limit: 7, offset: 3),
                DocumentQuery(collection: "items", predicate: .compare(Self.path("name"), .equal, .null)),
                DocumentQuery(
                    collection: "items", predicate: .isIn(Self.path("name"), [.null, .string("item 3"), .number(3)])),
                DocumentQuery(
                    collection: "items",
                    predicate: .isIn(Self.path("store_id"), [.number(3), .string("s5"), .bool(true)])),
                DocumentQuery(
                    collection: "items", predicate: .compare(Self.path("name"), .lessOrEqual, .string("item 2"))),
            ]
            for query in queries {
                let sqlite = try await store.read { try $0.documents(matching: query) }
                let memory = try await oracle.read { try $0.documents(matching: query) }
                #expect(sqlite == memory, "\(query.predicate)")
                let count = try await store.read { try $0.count(matching: query) }
                #expect(count == (try await oracle.read { try $0.count(matching: query) }))
            }
            try store.close()
        }
    }

    @Test("Nested paths and arrays: an index on address.city is used; one on tags changes no result")
    func nestedPathsAndArrays() async throws {
        try await TemporaryDirectory.with { directory in
            let file = directory.file("store.sqlite")
            let store = try SQLiteDocumentStore(path: file)
            try await Self.fill(store, count: 600)
            try await store.createIndex(DocumentIndex(collection: "items", fields: ["address.city"]))
            try await store.createIndex(DocumentIndex(collection: "items", fields: ["tags"]))
            let city = try DocumentQuery(
                collection: "items", predicate: .compare(Self.path("address.city"), .equal, .string("city 7")))
            let plan = try Self.plan(city, indexed: [try Self.path("address.city")], file: file)
            #expect(plan.contains("USING INDEX tether_idx_items__address.city"), "\(plan)")
            #expect(try await store.read { try $0.count(matching: city) } == 10)
            let tagged = try DocumentQuery(collection: "items", predicate: .contains(Self.path("tags"), .string("t1")))
            #expect(try await store.read { try $0.count(matching: tagged) } == 150)
            try store.close()
        }
    }

    @Test("Declared twice: one index. Reopened: still declared, still used. A bad path: an error naming it")
    func idempotentPersistentAndChecked() async throws {
        try await TemporaryDirectory.with { directory in
            let file = directory.file("store.sqlite")
            do {
                let store = try SQLiteDocumentStore(path: file)
                try await Self.fill(store, count: 100)
                let index = try DocumentIndex(collection: "items", fields: ["store_id"])
                try await store.createIndex(index)
                try await store.createIndex(index)
                #expect(try await store.declaredIndexes() == [index])
                try store.close()
            }
            let reopened = try SQLiteDocumentStore(path: file)
            #expect(try await reopened.declaredIndexes().map(\.description) == ["items(store_id)"])
            let query = try DocumentQuery(
                collection: "items", predicate: .compare(Self.path("store_id"), .equal, .string("s1")))
            // Ten documents of store s1, but d00051's store_id is the number 1.
            #expect(try await reopened.read { try $0.count(matching: query) } == 9)
            let plan = try Self.plan(query, indexed: [try Self.path("store_id")], file: file)
            #expect(plan.contains("USING INDEX tether_idx_items__store_id"), "\(plan)")

            #expect {
                try DocumentIndex(collection: "items", fields: ["store id"])
            } throws: { error in
                let error = error as? PersistenceKit.PersistenceError
                return error?.kind == .invalidQuery && error?.message.contains("'store id'") == true
                    && error?.collection == "items"
            }
            #expect(throws: PersistenceKit.PersistenceError.self) {
                try DocumentIndex(collection: "items", fields: [String]())
            }
            #expect(throws: PersistenceKit.PersistenceError.self) {
                try DocumentIndex(collection: "items", fields: ["a", "a"])
            }
            #expect(throws: PersistenceKit.PersistenceError.self) {
                try DocumentIndex(collection: "1items", fields: ["a"])
            }
            try reopened.close()
        }
    }

    @Test(
        "While an index is being built, readers go on: a read completes inside the build's open transaction",
        // A limit for a hang. The build's transaction is held open by the test, however many documents it indexes,
        // so a few thousand are enough: filling the store is most of the test's time under ThreadSanitizer.
        .timeLimit(minutes: 3))
    func readersGoOnDuringCreation() async throws {
        try await TemporaryDirectory.with { directory in
            let file = directory.file("store.sqlite")
            let store = try SQLiteDocumentStore(path: file)
            try await Self.fill(store, count: 2_000)
            // The build createIndex runs, held open on a connection of the test's own until the read has returned.
            let building = LockedValue(false)
            let finish = DispatchSemaphore(value: 0)
            let builder = try DatabaseQueue(path: file)
            let thread = Thread {
                try? builder.inDatabase { db in
                    try db.execute(sql: "BEGIN IMMEDIATE")
                    try db.execute(
                        sql: "CREATE INDEX held ON tether_documents(collection, json_extract(body, '$.\"name\"'))")
                    building.withLock { $0 = true }
                    finish.wait()
                    try db.execute(sql: "ROLLBACK")
                }
            }
            thread.start()
            try await eventually { building.withLock { $0 } }
            let all = try DocumentQuery(collection: "items")
            #expect(try await store.read { try $0.count(matching: all) } == 2_000, "read while the build is open")
            finish.signal()
            try store.close()
        }
    }
}
