import DocumentStoreKit
import Foundation
import GRDB
import PersistenceKit
import SQLiteAdapter
import Testing
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Security: no user text is ever part of SQL. Every value and every path a query names travels as a bound
/// argument; the SQL text is built from fixed fragments only — and from the paths of indexes the application
/// declared, which `DocumentPath` limits to letters, digits, `_` and `-`.
@Suite("SQL is never built from user text", .leakChecked)
struct SQLInjectionTests {
    static let hostile = [
        "'; DROP TABLE tether_documents; --", "\" OR 1=1 --", "x') OR ('1'='1", "$[0]", "a\"b",
        "ROBERT'); DELETE FROM tether_meta; --",
    ]

    @Test(
        "Hostile values travel as arguments, never in the SQL, for every kind of condition and the sort; hostile paths are refused"
    )
    func hostileTextIsBound() throws {
        for text in Self.hostile {
            // A path is letters, digits, '_' and '-' only: hostile text is refused before any SQL exists.
            #expect(throws: PersistenceKit.PersistenceError.self) { try DocumentPath(components: [text, "inner"]) }
            let path = try DocumentPath(components: ["outer-part", "inner"])
            let predicates: [DocumentPredicate] = [
                .compare(path, .equal, .string(text)),
                .compare(path, .less, .string(text)),
                .isIn(path, [.string(text), .number(1)]),
                .contains(path, .string(text)),
                .like(path, text + "%"),
                .not(.or([.compare(path, .notEqual, .string(text)), .all])),
            ]
            for predicate in predicates {
                let query = try DocumentQuery(
                    collection: "items", predicate: predicate, sort: [DocumentSort(path, .descending)], limit: 5,
                    offset: 1)
                for (sql, arguments) in [SQLiteQueryCompiler.select(query), SQLiteQueryCompiler.count(query)] {
                    #expect(!sql.contains(text), "the SQL contains user text: \(sql)")
                    #expect(!sql.contains("DROP") && !sql.contains("DELETE") && !sql.contains("outer-part"), "\(sql)")
                    #expect(!arguments.isEmpty, "the values and the path travel as arguments")
                }
            }
        }
    }

    @Test("The paths of declared indexes are the only text written into the SQL; values stay bound")
    func indexedPathsAreTheOnlyText() throws {
        let indexed = try DocumentPath("store_id")
        let other = try DocumentPath("outer-part")
        for text in Self.hostile {
            let query = try DocumentQuery(
                collection: "items",
                predicate: .and([
                    .compare(indexed, .equal, .string(text)), .isIn(indexed, [.string(text), .null]),
                    .compare(other, .equal, .string(text)),
                ]),
                sort: [DocumentSort(indexed)], limit: 5)
            let (sql, arguments) = SQLiteQueryCompiler.select(query, indexed: [indexed])
            #expect(!sql.contains(text), "the SQL contains user text: \(sql)")
            #expect(sql.contains("json_extract(body, '$.\"store_id\"')"), "the declared path is written out")
            #expect(!sql.contains("outer-part"), "an undeclared path stays a parameter: \(sql)")
            #expect(!arguments.isEmpty)
        }
    }

    @Test("Hostile text stored and queried on a real file changes nothing but itself")
    func hostileTextOnDisk() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try SQLiteDocumentStore(path: directory.file("store.sqlite"))
            for (index, text) in Self.hostile.enumerated() {
                _ = try await store.upsert(["_id": .string("d\(index)"), "name": .string(text)], into: "items")
            }
            for text in Self.hostile {
                let path = try DocumentPath("name")
                let query = try DocumentQuery(collection: "items", predicate: .compare(path, .equal, .string(text)))
                let found = try await store.read { try $0.documents(matching: query) }
                #expect(found.count == 1, "exactly the document whose name is the literal text")
            }
            let all = try DocumentQuery(collection: "items")
            #expect(try await store.read { try $0.count(matching: all) } == Self.hostile.count)
            #expect(try await store.integrityCheck() == ["ok"])
            try store.close()
        }
    }
}
