import Foundation
import GRDB
import LiveQueryKit
import SQLiteAdapter
import TetherConcurrency
import TetherJSON

/// 10,000 documents of about 256 bytes in 100 groups; the observed query is one group, sorted, limit 100.
enum Fixture {
    static let documentCount = 10_000
    static let groups = 100
    static let observedGroup = "g7"
    static let pad = String(repeating: "x", count: 170)

    static func document(_ index: Int, seq: Int = -1) -> JSONValue {
        [
            "_id": .string("d\(index)"), "group": .string("g\(index % groups)"), "name": .string("Item \(index)"),
            "n": .number(Double(index)), "seq": .number(Double(seq)), "pad": .string(pad),
        ]
    }

    /// A document of the observed group, chosen by `i`.
    static func observedIndex(_ i: Int) -> Int { 7 + groups * (i % (documentCount / groups)) }

    /// A document of another group, chosen by `i`.
    static func otherIndex(_ i: Int) -> Int { 8 + groups * (i % (documentCount / groups)) }

    static func directory() -> String {
        let path = NSTemporaryDirectory() + "tether-livequery-benchmarks-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A Tether store on a new file, filled.
    static func tetherStore() async throws -> Store {
        let documents = try SQLiteDocumentStore(path: directory() + "/tether-\(UUID().uuidString).sqlite")
        try await documents.write { transaction in
            for index in 0..<documentCount { try transaction.upsert(document(index), into: "items") }
        }
        return Store(documents)
    }

    static func tetherQuery(_ store: Store) -> PendingQuery {
        store.collection("items").find("group == $args.g", args: ["g": .string(observedGroup)]).sort("name").limit(100)
    }

    /// A GRDB pool on a new file with the same schema and documents.
    static func grdbPool() throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        let pool = try DatabasePool(
            path: directory() + "/grdb-\(UUID().uuidString).sqlite", configuration: configuration)
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE tether_documents (rowid INTEGER PRIMARY KEY, collection TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL);
                    CREATE UNIQUE INDEX tether_documents_collection_id ON tether_documents(collection, id);
                    """)
            for index in 0..<documentCount {
                try db.execute(
                    sql: "INSERT INTO tether_documents (collection, id, body) VALUES ('items', ?, ?)",
                    arguments: ["d\(index)", document(index).jsonText])
            }
        }
        return pool
    }

    /// The same query in SQL, parsed into JSON values as Tether does.
    static func grdbFetch(_ db: Database) throws -> [JSONValue] {
        try String.fetchAll(
            db,
            sql: """
                SELECT body FROM tether_documents WHERE collection = 'items' AND json_extract(body, '$.group') = ?
                ORDER BY json_extract(body, '$.name'), id LIMIT 100
                """, arguments: [observedGroup]
        ).map { try JSONValue(parsing: $0) }
    }

    static func grdbWrite(_ pool: DatabasePool, index: Int, seq: Int) async throws {
        let text = document(index, seq: seq).jsonText
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE tether_documents SET body = ? WHERE collection = 'items' AND id = ?",
                arguments: [text, "d\(index)"])
        }
    }
}

/// The largest `seq` in a result: the newest commit it reflects.
func newestSeq(_ documents: [JSONValue]) -> Int {
    documents.reduce(-1) { max($0, $1["seq"]?.intValue ?? -1) }
}

/// Resident memory, sampled every 5 ms on a thread of its own; keeps the peak.
final class ResidentSampler: Sendable {
    let peak = LockedValue(0)
    let running = LockedValue(true)

    init() {
        let thread = Thread { [self] in
            while running.withLock({ $0 }) {
                let now = Self.resident()
                peak.withLock { $0 = max($0, now) }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        thread.start()
    }

    func stop() -> Int {
        running.withLock { $0 = false }
        return peak.withLock { $0 }
    }

    static func resident() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }
}

/// Microseconds on the monotonic clock.
func nowMicroseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return time.tv_sec * 1_000_000 + time.tv_nsec / 1_000
}
