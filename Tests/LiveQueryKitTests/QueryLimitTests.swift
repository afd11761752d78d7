import DocumentStoreKit
import LiveQueryKit
import PersistenceKit
import Testing
import TetherJSON
import TetherTestingTraits

/// Deep and large queries: refused alike on every store where they nest too deep (they once crashed the parser and
/// the SQL compiler), answered alike on every store where they are merely large (they once failed on SQLite only).
@Suite("Query limits: deep queries refused with a column, large ones answered alike by both stores", .leakChecked)
struct QueryLimitTests {
    /// Documents with every kind of value the literals compare with.
    static func fill(_ store: Store) async throws {
        try await store.write { transaction in
            let items = transaction.collection("items")
            for index in 0..<60 {
                let n: JSONValue =
                    switch index % 6 {
                    case 0: .number(Double(index))
                    case 1: .number(Double(index) + 0.5)
                    case 2: .string("s\(index)")
                    case 3: .bool(index % 4 == 3)
                    case 4: .null
                    default: ["nested": .number(Double(index))]
                    }
                var document: JSONValue = ["_id": .string("d\(index)"), "n": n, "k": .number(Double(index % 7))]
                if index % 10 == 9 { document = ["_id": .string("d\(index)")] }  // n missing
                try items.upsert(document)
            }
        }
    }

    /// The ids `query` matches on both stores, which must agree with each other and with `matches`, the
    /// reference evaluator.
    static func answer(_ query: String, args: [String: JSONValue] = [:]) async throws -> [String] {
        var answers: [[String]] = []
        for kind in TestStores.kinds {
            let store = try TestStores.make(kind)
            try await fill(store)
            let found = try await store.collection("items").find(query, args: args).sort("_id").exec().map(\.id)
            answers.append(found)
            let predicate = try store.collection("items").find(query, args: args).compiled().predicate
            let all = try await store.collection("items").findAll().sort("_id").exec()
            #expect(found == all.filter { predicate.matches($0.value) }.map(\.id), "\(kind): the reference disagrees")
        }
        #expect(answers[0] == answers[1], "the stores disagree: \(answers)")
        return answers[0]
    }

    @Test(
        "10,000 parentheses or '!': a QueryError at the column where the nesting passed 15, on every store",
        arguments: ["(", "!"])
    func tooDeep(opening: String) async throws {
        let query =
            opening == "("
            ? String(repeating: "(", count: 10_000) + "n == 1" + String(repeating: ")", count: 10_000)
            : String(repeating: "!", count: 10_000) + "n == 1"
        for kind in TestStores.kinds {
            let store = try TestStores.make(kind)
            do {
                _ = try await store.collection("items").find(query).exec()
                Issue.record("\(kind): a query nested 10,000 deep ran")
            } catch let error as QueryError {
                #expect(error.column == 16, "\(kind): \(error.message)")
                #expect(error.message.contains("deeper than 15 levels"))
            }
        }
    }

    @Test(
        "Nesting up to the limit runs on both stores alike: 15 '!', 15 parentheses, 15 alternating || and && around the heaviest conditions"
    )
    func deepestAccepted() async throws {
        let nots = try await Self.answer(String(repeating: "!", count: 15) + "n == 0")
        #expect(nots.count == 59, "an odd number of '!' negates")
        let parens = try await Self.answer(
            String(repeating: "(", count: 15) + "k == 3" + String(repeating: ")", count: 15))
        #expect(!parens.isEmpty)
        // contains(…) and IN compile to the most SQL, each level a parenthesis: the depth SQLite's parser must take.
        let heavy = ["contains(n, 's')", "n IN [1, 's2', true, null]", "n LIKE 's%'", "k == 3"]
        var alternating = heavy[0]
        for level in 0..<15 {
            alternating = "\(heavy[level % heavy.count]) \(level.isMultiple(of: 2) ? "||" : "&&") (\(alternating))"
        }
        _ = try await Self.answer(alternating)
        var notted = heavy[1]
        for level in 0..<3 { notted = "!(\(heavy[level % heavy.count]) || !(\(notted)))" }
        _ = try await Self.answer(notted)
    }

    @Test("Large, not deep: IN with 999 values, 1,000 && terms, 1,000 || terms — answered alike by both stores")
    func large() async throws {
        var values: [JSONValue] = (0..<990).map { .number(Double($0)) }
        values += [
            .string("s2"), .string("s8"), .bool(true), .bool(false), .null, .number(1.5), .number(7.5), "x", "y",
        ]
        let inList = try await Self.answer("n IN $args.values", args: ["values": .array(values)])
        #expect(inList.contains("d0") && inList.contains("d2") && inList.contains("d3") && inList.contains("d4"))
        #expect(inList.contains("d9"), "a missing field is null, and null is in the list")
        #expect(!inList.contains("d5"), "an object is equal to no literal")
        let literal = "[" + (0..<999).map(String.init).joined(separator: ", ") + "]"
        #expect(try await Self.answer("n IN \(literal)").count == 10)
        let ands = try await Self.answer((0..<1_000).map { "k != \($0 + 7)" }.joined(separator: " && "))
        #expect(ands.count == 60)
        let ors = try await Self.answer((0..<1_000).map { "k == \($0 % 3)" }.joined(separator: " || "))
        #expect(!ors.isEmpty && ors.count < 60)
    }

    @Test(
        "NaN or an infinity as a query argument: a QueryError at the argument's column, on both stores alike (SQLite found 0 documents where memory found 3)"
    )
    func nonFiniteArgument() async throws {
        for kind in TestStores.kinds {
            let store = try TestStores.make(kind)
            let items = store.collection("items")
            for (index, price) in [1.0, 2, 3].enumerated() {
                try await items.upsert(["_id": .string("d\(index)"), "price": .number(price)])
            }
            for number in [Double.nan, .infinity, -.infinity] {
                for (text, args) in [
                    ("price != $args.x", ["x": JSONValue.number(number)]),
                    ("price IN $args.list", ["list": [1, .number(number)]]),
                ] {
                    let error = try #require(throws: QueryError.self, "\(kind): \(text) with \(number)") {
                        try items.find(text, args: args).compiled()
                    }
                    #expect(error.message.contains("is \(number)"), "\(kind): \(error)")
                    #expect(error.column == 10, "at $args: \(kind): \(error)")
                }
            }
            #expect(try await items.find("price != $args.x", args: ["x": 2]).exec().count == 2, "\(kind)")
        }
    }

    @Test("A predicate built in code deeper than 16: invalidQuery on both stores, at construction and at run time")
    func deepPredicateInCode() async throws {
        var predicate = DocumentPredicate.compare(try DocumentPath("n"), .equal, .number(1))
        for _ in 0..<40 { predicate = .not(predicate) }
        #expect(predicate.depth == 40)
        #expect(throws: PersistenceError.self) { try DocumentQuery(collection: "items", predicate: predicate) }
        var query = try DocumentQuery(collection: "items")
        query.predicate = predicate  // past the initializer's check: the store checks again
        for kind in TestStores.kinds {
            let store = try TestStores.make(kind)
            do {
                _ = try await store.documents.documents(matching: query)
                Issue.record("\(kind): ran a predicate 40 deep")
            } catch let error as PersistenceError {
                #expect(error.kind == .invalidQuery, "\(kind): \(error)")
                #expect(error.message.contains("40 deep"))
            }
        }
    }
}
