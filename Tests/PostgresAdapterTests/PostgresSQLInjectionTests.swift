import DocumentStoreKit
import PersistenceKit
import PostgresAdapter
import PostgresNIO
import Testing
import TetherJSON
import TetherTestingTraits

/// Security: no user text is ever part of PostgreSQL's SQL. Every value, pattern and field name a query holds travels
/// as a bound parameter; the SQL text is built from fixed fragments, the schema's checked name, and the paths of
/// indexes the application declared — which `DocumentPath` limits to letters, digits, `_` and `-`.
@Suite("PostgreSQL: SQL is never built from user text", .needsProcessorTime)
struct PostgresSQLInjectionTests {
    static let hostile = [
        "'; DROP TABLE tether_documents; --", "\" OR 1=1 --", "x') OR ('1'='1", "1; SELECT pg_sleep(10)", "a\"b",
        "$$; DELETE $$",
        "ROBERT'); DELETE FROM tether_meta; --", "{store_id}", "\\'", "E'\\x27'",
    ]

    @Test("Hostile values and patterns are bound, never in the SQL, for every kind of condition and the sort")
    func hostileTextIsBound() throws {
        for text in Self.hostile {
            #expect(throws: PersistenceError.self) { try DocumentPath(components: [text, "inner"]) }
            let path = try DocumentPath(components: ["outer-part", "inner"])
            let predicates: [DocumentPredicate] = [
                .compare(path, .equal, .string(text)), .compare(path, .less, .string(text)),
                .isIn(path, [.string(text), .number(1), .null]), .contains(path, .string(text)),
                .like(path, text + "%"), .not(.or([.compare(path, .notEqual, .string(text)), .all])),
            ]
            for predicate in predicates {
                let query = try DocumentQuery(
                    collection: "items", predicate: predicate, sort: [DocumentSort(path, .descending)], limit: 5,
                    offset: 1)
                for compiled in [
                    PostgresQueryCompiler.select(query, from: "s.tether_documents"),
                    PostgresQueryCompiler.count(query, from: "s.tether_documents"),
                ] {
                    #expect(!compiled.sql.contains(text), "the SQL contains user text: \(compiled.sql)")
                    #expect(
                        !compiled.sql.contains("DROP") && !compiled.sql.contains("DELETE")
                            && !compiled.sql.contains("outer-part") && !compiled.sql.contains("inner"),
                        "\(compiled.sql)")
                    #expect(compiled.binds.count >= 3, "the collection, the path and the values are bound")
                }
            }
        }
    }

    @Test("The paths of declared indexes are the only text written into the SQL; values stay bound")
    func indexedPathsAreTheOnlyText() throws {
        let indexed = try DocumentPath("store_id")
        for text in Self.hostile {
            let query = try DocumentQuery(
                collection: "items",
                predicate: .and([
                    .compare(indexed, .equal, .string(text)), .isIn(indexed, [.string(text), .null]),
                    .compare(DocumentPath("outer-part"), .equal, .string(text)),
                ]),
                sort: [DocumentSort(indexed)], limit: 5)
            let compiled = PostgresQueryCompiler.select(query, from: "s.tether_documents", indexed: [indexed])
            #expect(!compiled.sql.contains(text), "the SQL contains user text: \(compiled.sql)")
            #expect(compiled.sql.contains("(body -> 'store_id')"), "the declared path is written out")
            #expect(!compiled.sql.contains("outer-part"), "an undeclared path stays a parameter: \(compiled.sql)")
        }
    }

    @Test("Hostile text stored and queried on a real server changes nothing but itself", PostgresTestServer.required)
    func hostileTextOnTheServer() async throws {
        try await PostgresTestServer.withStore { store throws in
            for (index, text) in Self.hostile.enumerated() {
                _ = try await store.upsert(
                    ["_id": .string(text), "name": .string(text), "n": .number(Double(index))], into: "items")
            }
            let name = try DocumentPath("name")
            for text in Self.hostile {
                for predicate: DocumentPredicate in [
                    .compare(name, .equal, .string(text)), .isIn(name, [.string(text)]),
                    .like(name, LikeEscaping.literal(text)),
                ] {
                    let query = try DocumentQuery(collection: "items", predicate: predicate)
                    let found = try await store.read { try $0.documents(matching: query) }
                    #expect(found.map(\.id) == [text], "exactly the document named by the literal text")
                }
                #expect(try await store.document(id: text, in: "items")?.body["name"] == .string(text))
            }
            let all = try DocumentQuery(collection: "items")
            #expect(try await store.read { try $0.count(matching: all) } == Self.hostile.count)
            #expect(try await store.read { try $0.commitNumber() } == UInt64(Self.hostile.count))
        }
    }
}

/// A `LIKE` pattern that matches `text` literally.
enum LikeEscaping {
    static func literal(_ text: String) -> String {
        var pattern = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { pattern.append("\\") }
            pattern.append(character)
        }
        return pattern
    }
}
