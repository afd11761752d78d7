import DocumentStoreKit
import LiveQueryKit
import Testing
import TetherJSON
import TetherTestingTraits

@Suite("The query language: operators, precedence, parameters, errors with a caret", .leakChecked)
struct QueryLanguageTests {
    static func path(_ text: String) -> DocumentPath { try! DocumentPath(text) }

    static func compile(_ text: String, args: [String: JSONValue] = [:]) throws -> DocumentPredicate {
        try Store.inMemory().collection("items").find(text, args: args).compiled().predicate
    }

    @Test(
        "Each operator compiles to its predicate",
        arguments: [
            ("store_id == 'abc123'", DocumentPredicate.compare(path("store_id"), .equal, .string("abc123"))),
            ("n != 3", .compare(path("n"), .notEqual, .number(3))),
            ("n < -1.5", .compare(path("n"), .less, .number(-1.5))),
            ("n <= 2e3", .compare(path("n"), .lessOrEqual, .number(2000))),
            ("name > \"a\"", .compare(path("name"), .greater, .string("a"))),
            ("name >= 'b'", .compare(path("name"), .greaterOrEqual, .string("b"))),
            ("flag == true", .compare(path("flag"), .equal, .bool(true))),
            ("gone == null", .compare(path("gone"), .equal, .null)),
            ("a.b.c == 1", .compare(path("a.b.c"), .equal, .number(1))),
            ("store_id IN ['a', 'b', null]", .isIn(path("store_id"), [.string("a"), .string("b"), .null])),
            ("store_id in []", .isIn(path("store_id"), [])),
            ("contains(tags, 'red')", .contains(path("tags"), .string("red"))),
            ("name LIKE 'Ap%'", .like(path("name"), "Ap%")),
            ("!(n == 1)", .not(.compare(path("n"), .equal, .number(1)))),
            ("it == 'it\\'s'", .compare(path("it"), .equal, .string("it's"))),
        ])
    func operators(text: String, expected: DocumentPredicate) throws {
        #expect(try Self.compile(text) == expected)
    }

    @Test("&& binds tighter than ||; ! tighter than both; parentheses override")
    func precedence() throws {
        let a = DocumentPredicate.compare(Self.path("a"), .equal, .number(1))
        let b = DocumentPredicate.compare(Self.path("b"), .equal, .number(2))
        let c = DocumentPredicate.compare(Self.path("c"), .equal, .number(3))
        #expect(try Self.compile("a == 1 || b == 2 && c == 3") == .or([a, .and([b, c])]))
        #expect(try Self.compile("(a == 1 || b == 2) && c == 3") == .and([.or([a, b]), c]))
        #expect(try Self.compile("!a == 1 && b == 2") == .and([.not(a), b]))
    }

    @Test("$args are bound as values: scalars, and arrays for IN")
    func parameters() throws {
        let args: [String: JSONValue] = ["sid": "abc", "limit": 5, "ids": ["x", 2, true], "flag": false]
        #expect(
            try Self.compile("store_id == $args.sid && n < $args.limit && f != $args.flag", args: args)
                == .and([
                    .compare(Self.path("store_id"), .equal, .string("abc")),
                    .compare(Self.path("n"), .less, .number(5)),
                    .compare(Self.path("f"), .notEqual, .bool(false)),
                ]))
        #expect(
            try Self.compile("_id IN $args.ids", args: args)
                == .isIn(Self.path("_id"), [.string("x"), .number(2), .bool(true)]))
    }

    @Test(
        "Bad queries fail with what was expected, the column, and a caret",
        arguments: [
            ("", 1, "the query is empty"),
            ("   ", 1, "the query is empty"),
            ("store_id ==", 12, "expected a value after '==', found the end of the query"),
            ("store_id = 'a'", 10, "'=' is not an operator"),
            ("a == 1 &", 8, "'&' is not an operator"),
            ("a <= 1 | b", 8, "'|' is not an operator"),
            ("a !== 1", 5, "'=' is not an operator"),
            ("a >", 4, "expected a value after '>', found the end of the query"),
            ("a == 1 b == 2", 8, "expected '&&', '||' or the end of the query, found 'b'"),
            ("(a == 1", 8, "expected ')' to close the parenthesis"),
            ("name == 'open", 9, "this string has no closing '"),
            ("n < true", 5, "type mismatch: '<' compares numbers or strings, not true"),
            ("n > null", 5, "type mismatch: '>' compares numbers or strings"),
            ("name LIKE 3", 11, "type mismatch: LIKE takes a string pattern"),
            ("a == $args.missing", 6, "unknown parameter $args.missing (no args were given)"),
            ("a == $sid", 6, "a parameter is written $args.name"),
            ("a IN 'x'", 6, "expected '[' after IN"),
            ("a.  == 1", 5, "expected a field name after '.'"),
            ("== 1", 1, "expected a field name, '(', '!' or contains(…), found '=='"),
            ("contains(tags 'a')", 15, "expected ',' between the field and the value"),
            ("a == 1; DROP TABLE x", 7, "unexpected character ';'"),
            ("a == 1 -- comment", 8, "unexpected character '-'"),
            ("café == 1", 1, "'café' is not a field path"),
        ])
    func errors(text: String, column: Int, message: String) {
        do {
            _ = try Self.compile(text)
            Issue.record("\(text.debugDescription) compiled")
        } catch let error as QueryError {
            #expect(error.column == column, "\(error)")
            #expect(error.message.hasPrefix(message), "\(error)")
            #expect(error.query == text)
            #expect(error.description.contains(String(repeating: " ", count: column - 1) + "^"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("Type mismatches in $args: an object where a value is needed, a scalar where IN needs a list")
    func argumentTypes() {
        #expect(throws: QueryError.self) { try Self.compile("a == $args.o", args: ["o": ["k": 1]]) }
        #expect(throws: QueryError.self) { try Self.compile("a IN $args.s", args: ["s": "x"]) }
        #expect(throws: QueryError.self) { try Self.compile("a IN $args.l", args: ["l": [["nested": 1]]]) }
    }

    @Test("Injection attempts are values: they match nothing (or exactly the literal) and change nothing")
    func injection() async throws {
        for store in [Store.inMemory(), try TestStores.sqlite()] {
            let items = store.collection("items")
            try await items.upsert(["_id": "a", "name": "x'; DROP TABLE tether_documents; --"])
            try await items.upsert(["_id": "b", "name": "plain"])
            let attempts: [(String, [String: JSONValue], [String])] = [
                ("name == \"x'; DROP TABLE tether_documents; --\"", [:], ["a"]),
                ("name == $args.n", ["n": "' OR 1=1 --"], []),
                ("name == $args.n", ["n": "x'; DROP TABLE tether_documents; --"], ["a"]),
                ("name LIKE $args.p", ["p": "%' OR '1'='1"], []),
                ("name IN $args.l", ["l": ["plain", "\") OR 1=1 --"]], ["b"]),
                ("contains(name, $args.c)", ["c": "; --"], ["a"]),
            ]
            for (text, args, expected) in attempts {
                let ids = try await items.find(text, args: args).exec().map(\.id)
                #expect(ids == expected, "\(text) with \(args)")
            }
            #expect(try await items.findAll().exec().count == 2, "the data must be intact")
        }
    }
}
