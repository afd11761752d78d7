import DocumentStoreKit
import PersistenceKit
import PostgresAdapter
import Testing
import TetherJSON
import TetherTestingTraits

/// Declared indexes on PostgreSQL: expression indexes on the very expressions the query compiler writes for their
/// paths, so that the planner uses them — proven by its own plan — and never changing a result.
@Suite("PostgreSQL: declared indexes", PostgresTestServer.required, .needsProcessorTime, .timeLimit(minutes: 2))
struct PostgresIndexTests {
    /// `count` documents in `items`: 100 stores, names, prices, a nested city, and a few of other types.
    static func fill(_ store: PostgresDocumentStore, count: Int) async throws {
        try await store.write { transaction in
            for index in 0..<count {
                var body: [String: JSONValue] = [
                    "_id": .string("d\(index)"),
                    "store_id": .string("s\(index % 100)"),
                    "name": .string("item \(index % 97)"),
                    "price": .number(Double(index % 500)),
                    "address": ["city": .string("city \(index % 60)")],
                ]
                if index % 17 == 0 { body["store_id"] = .number(Double(index % 100)) }
                if index % 19 == 0 { body["name"] = .null }
                if index % 23 == 0 { body["price"] = .string("n/a") }
                try transaction.upsert(.object(body), into: "items")
            }
        }
    }

    static func path(_ dotted: String) throws -> DocumentPath { try DocumentPath(dotted) }

    @Test("Indexes serve equality with sort and limit, membership, a number range and a nested path — the plan says so")
    func plans() async throws {
        let configuration = try PostgresTestServer.freshConfiguration()
        try await PostgresTestServer.withStore(configuration) { store throws in
            try await Self.fill(store, count: 10_000)
            let equality = try DocumentQuery(
                collection: "items", predicate: .compare(Self.path("store_id"), .equal, .string("s3")),
                sort: [DocumentSort(Self.path("name"))], limit: 100)
            let before = try await store.read { try $0.documents(matching: equality) }
            let unindexed = try await PostgresTestServer.plan(equality, indexed: [], in: configuration)
            #expect(!unindexed.contains("tether_idx_"), "\(unindexed)")

            try await store.createIndex(DocumentIndex(collection: "items", fields: ["store_id", "price"]))
            try await store.createIndex(DocumentIndex(collection: "items", fields: ["address.city"]))
            let indexed: Set<DocumentPath> = try [Self.path("store_id"), Self.path("price"), Self.path("address.city")]
            let queries = try [
                equality,
                DocumentQuery(
                    collection: "items", predicate: .isIn(Self.path("store_id"), [.string("s1"), .string("s2")]),
                    sort: [DocumentSort(Self.path("name"))], limit: 20),
                DocumentQuery(
                    collection: "items",
                    predicate: .and([
                        .compare(Self.path("store_id"), .equal, .string("s1")),
                        .compare(Self.path("price"), .greater, .number(400)),
                    ])),
                DocumentQuery(
                    collection: "items", predicate: .compare(Self.path("address.city"), .equal, .string("city 7"))),
            ]
            for query in queries {
                let plan = try await PostgresTestServer.plan(query, indexed: indexed, in: configuration)
                #expect(plan.contains("Index") && plan.contains("tether_idx_"), "\(query.predicate): \(plan)")
            }
            #expect(try await store.read { try $0.documents(matching: equality) } == before, "no result changes")
        }
    }

    @Test("Indexed and unindexed, every kind of condition returns what the in-memory store returns")
    func sameResults() async throws {
        try await PostgresTestServer.withStore { store throws in
            try await Self.fill(store, count: 2_000)
            let oracle = InMemoryDocumentStore()
            let all = try await store.read { try $0.documents(matching: DocumentQuery(collection: "items")) }
            try await oracle.write { transaction in
                for document in all { try transaction.upsert(document.body, into: "items") }
            }
            let queries = try [
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
                    collection: "items", predicate: .compare(Self.path("price"), .lessOrEqual, .number(2)),
                    sort: [DocumentSort(Self.path("price"))]),
                DocumentQuery(
                    collection: "items", predicate: .compare(Self.path("address.city"), .greater, .string("city 5"))),
            ]
            for round in 0..<2 {
                for query in queries {
                    let postgres = try await store.read { try $0.documents(matching: query) }
                    let memory = try await oracle.read { try $0.documents(matching: query) }
                    #expect(postgres == memory, "round \(round): \(query.predicate)")
                    #expect(
                        try await store.read { try $0.count(matching: query) }
                            == (try await oracle.read { try $0.count(matching: query) }))
                }
                try await store.createIndex(DocumentIndex(collection: "items", fields: ["store_id", "name"]))
                try await store.createIndex(DocumentIndex(collection: "items", fields: ["price"]))
                try await store.createIndex(DocumentIndex(collection: "items", fields: ["address.city"]))
            }
        }
    }

    @Test("An index declared twice, or by two stores at once, is built once and listed once")
    func declaredTwice() async throws {
        let configuration = try PostgresTestServer.freshConfiguration()
        let other = try PostgresDocumentStore(configuration: configuration)
        try await PostgresTestServer.withStore(configuration) { store throws in
            try await PostgresTestServer.running(other) { other throws in
                let index = try DocumentIndex(collection: "items", fields: ["a.b", "c"])
                async let first: Void = store.createIndex(index)
                async let second: Void = other.createIndex(index)
                _ = try await (first, second)
                try await store.createIndex(index)
                #expect(try await store.declaredIndexes() == [index])
                #expect(try await other.declaredIndexes() == [index])
                let built = try await PostgresTestServer.execute(
                    "SELECT indexname FROM pg_indexes WHERE schemaname = '\(configuration.schema)' AND indexname LIKE 'tether_idx_%'"
                )
                #expect(built.count == 1, "\(built)")
            }
        }
    }
}
