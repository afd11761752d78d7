import BenchmarkSupport
import DocumentStoreKit
import Foundation
import GRDB
import LiveQueryKit
import SQLiteAdapter
import TetherJSON

/// Documents of about 256 bytes in groups of 100; the observed query is one group, sorted by name, limit 100 — so
/// every write to a document of the observed group changes the result, whatever the collection's size.
struct Fixture: Sendable {
    let documentCount: Int
    var groups: Int { documentCount / 100 }
    static let observedGroup = 7
    static let pad = String(repeating: "x", count: 170)

    func document(_ index: Int, seq: Int = -1) -> JSONValue {
        [
            "_id": .string("d\(index)"), "group": .string("g\(index % groups)"), "name": .string("Item \(index)"),
            "n": .number(Double(index)), "seq": .number(Double(seq)), "pad": .string(Self.pad),
        ]
    }

    /// A document of group `group`, chosen by `i`.
    func index(inGroup group: Int, _ i: Int) -> Int { group + groups * (i % 100) }

    /// A document of the observed group, chosen by `i`.
    func observedIndex(_ i: Int) -> Int { index(inGroup: Self.observedGroup, i) }

    /// A document of another group, chosen by `i`.
    func otherIndex(_ i: Int) -> Int { index(inGroup: Self.observedGroup + 1, i) }

    static func directory() -> String {
        scratchDirectory("tether-livequery-benchmarks")
    }

    /// Both sides of a scenario, filled with the same documents.
    func sides() async throws -> (store: Store, pool: DatabasePool) {
        (try await tetherStore(), try grdbPool())
    }

    // MARK: Tether

    /// A Tether store on a new file, filled, with the index the query uses declared — as LiveQueryKit's docs say.
    func tetherStore() async throws -> Store {
        let documents = try SQLiteDocumentStore(path: Self.directory() + "/tether-\(UUID().uuidString).sqlite")
        let count = documentCount
        try await documents.write { transaction in
            for index in 0..<count { try transaction.upsert(self.document(index), into: "items") }
        }
        let store = Store(
            documents,
            configuration: .init(
                quietPeriod: Self.quietMilliseconds.flatMap { $0 > 0 ? .milliseconds($0) : nil },
                anticipatesSignals: Self.anticipatesSignals))
        try await store.collection("items").createIndex(["group", "name"])
        return store
    }

    /// `TETHER_BENCH_QUIET_MS`: the store's quiet period in milliseconds, 0 for none; unset, the store's default.
    static let quietMilliseconds = ProcessInfo.processInfo.environment["TETHER_BENCH_QUIET_MS"].flatMap { Int($0) }

    /// `TETHER_BENCH_SIDES`: the sides of scenario 2 to run, by name, separated by commas (`Tether snapshots(),GRDB`);
    /// unset, all three. For a focused look at one side against another; the full scenario is the one reported. The
    /// control sides (`Tether held (control)`, `Consumer alone (control)`) run only when named.
    static let sides = ProcessInfo.processInfo.environment["TETHER_BENCH_SIDES"].map {
        Set($0.split(separator: ",").map(String.init))
    }

    /// `TETHER_BENCH_RUNS`: how many runs scenario 2 makes; unset, its own count.
    static let runs = ProcessInfo.processInfo.environment["TETHER_BENCH_RUNS"].flatMap { Int($0) }

    /// `TETHER_BENCH_ANTICIPATE=0`: the store computes held-back results only when an observer signals; unset or
    /// anything else, the store's default (just before the signal is due).
    static let anticipatesSignals = ProcessInfo.processInfo.environment["TETHER_BENCH_ANTICIPATE"] != "0"

    func tetherQuery(_ store: Store, group: Int = Fixture.observedGroup) -> PendingQuery {
        store.collection("items").find("group == $args.g", args: ["g": .string("g\(group)")]).sort("name").limit(100)
    }

    func tetherWrite(_ store: Store, index: Int, seq: Int) async throws {
        _ = try await store.collection("items").upsert(document(index, seq: seq))
    }

    // MARK: GRDB

    /// A GRDB pool on a new file with the same table and documents, and the expression index a GRDB user who
    /// queries JSON fields creates (SQLite's docs: "Indexes On Expressions"), analyzed — so each fetch reads the
    /// group's 100 rows in order instead of scanning every body.
    func grdbPool() throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        let pool = try DatabasePool(
            path: Self.directory() + "/grdb-\(UUID().uuidString).sqlite", configuration: configuration)
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE documents (rowid INTEGER PRIMARY KEY, collection TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL);
                    CREATE UNIQUE INDEX documents_collection_id ON documents(collection, id);
                    CREATE INDEX documents_group_name ON documents(collection, json_extract(body, '$.group'), json_extract(body, '$.name'), id);
                    """)
            for index in 0..<documentCount {
                try db.execute(
                    sql: "INSERT INTO documents (collection, id, body) VALUES ('items', ?, ?)",
                    arguments: ["d\(index)", document(index).jsonText])
            }
            try db.execute(sql: "ANALYZE")
        }
        return pool
    }

    static let grdbSQL = """
        SELECT body FROM documents WHERE collection = 'items' AND json_extract(body, '$.group') = ?
        ORDER BY json_extract(body, '$.name'), id LIMIT 100
        """

    /// The same query in SQL, parsed into JSON values as Tether does.
    static func grdbFetch(_ db: Database, group: Int = Fixture.observedGroup) throws -> [JSONValue] {
        try String.fetchAll(db, sql: grdbSQL, arguments: ["g\(group)"]).map { try JSONValue(parsing: $0) }
    }

    /// The query plan of ``grdbSQL``, to show the index is used.
    static func grdbPlan(_ pool: DatabasePool) throws -> String {
        try pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + grdbSQL, arguments: ["g7"]).map { $0["detail"] as String }
                .joined(separator: "; ")
        }
    }

    /// A GRDB user's observation of the query: the tracked region is the whole table (every row's body is JSON),
    /// duplicates removed so an unchanged result is not delivered.
    static func grdbObservation(group: Int = Fixture.observedGroup, fetches: Counter? = nil)
        -> QueryObservation
    {
        ValueObservation.trackingConstantRegion { db -> [JSONValue] in
            fetches?.increment()
            return try grdbFetch(db, group: group)
        }.removeDuplicates()
    }

    func grdbWrite(_ pool: DatabasePool, index: Int, seq: Int) async throws {
        let text = document(index, seq: seq).jsonText
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE documents SET body = ? WHERE collection = 'items' AND id = ?",
                arguments: [text, "d\(index)"])
        }
    }
}

typealias QueryObservation = ValueObservation<ValueReducers.RemoveDuplicates<ValueReducers.Fetch<[JSONValue]>>>
