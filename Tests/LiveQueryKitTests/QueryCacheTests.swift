import DocumentStoreKit
import Testing
import TetherJSON

@testable import LiveQueryKit

/// Query texts lexed once and `find`s compiled once (``BoundedCache``): the same as made afresh, bounded, never
/// standing in for a failure, and never confusing two texts or arguments that differ only in how they spell a
/// character.
@Suite("Live queries: queries lexed and compiled once")
struct QueryCacheTests {
    typealias TokenCache = BoundedCache<ExactText, [PositionedToken]>

    static func lexed(_ text: String) throws -> [String] {
        var lexer = QueryLexer(text)
        return try lexer.tokens().map { "\($0.token)@\($0.column)" }
    }

    /// `text`'s tokens through `cache`, as the parser takes them.
    static func tokens(_ text: String, _ cache: TokenCache) throws -> [PositionedToken] {
        try cache.value(for: ExactText(text)) { () throws(QueryError) in
            var lexer = QueryLexer(text)
            return try lexer.tokens()
        }
    }

    /// The UTF-8 bytes of the string an equality predicate compares with.
    static func comparedBytes(_ predicate: DocumentPredicate) -> [UInt8]? {
        guard case .compare(_, .equal, .string(let string)) = predicate else { return nil }
        return Array(string.utf8)
    }

    @Test("A text seen before gives the lexer's tokens without lexing it again")
    func keptTokens() throws {
        let cache = TokenCache(capacity: 8)
        let text = "store_id == $args.sid && (price < 10 || name LIKE 'a%')"
        #expect(!cache.isKept(ExactText(text)))
        let first = try Self.tokens(text, cache).map { "\($0.token)@\($0.column)" }
        #expect(cache.isKept(ExactText(text)))
        let again = try Self.tokens(text, cache).map { "\($0.token)@\($0.column)" }
        #expect(first == (try Self.lexed(text)))
        #expect(again == first)
        #expect(cache.count == 1)
    }

    @Test("A text that fails to lex is not kept, and fails with the same column each time")
    func failuresAreNotKept() {
        let cache = TokenCache(capacity: 8)
        for _ in 0..<2 {
            #expect {
                _ = try Self.tokens("name == 'open", cache)
            } throws: { error in
                (error as? QueryError)?.column == 9
            }
        }
        #expect(!cache.isKept(ExactText("name == 'open")))
        #expect(cache.count == 0)
    }

    @Test("Bounded: a new text past the capacity empties the cache first, so it never holds more")
    func bounded() throws {
        let cache = TokenCache(capacity: 8)
        for index in 0..<20 {
            _ = try Self.tokens("n == \(index)", cache)
            #expect(cache.count <= 8)
        }
        // Emptied by the 9th and the 17th: the last four are kept.
        #expect(cache.count == 4)
        #expect((16..<20).allSatisfy { cache.isKept(ExactText("n == \($0)")) })
        #expect(!cache.isKept(ExactText("n == 15")))
    }

    @Test("A text compiled again binds each call's $args; a parameter missing fails each time, at its column")
    func argumentsBoundEachTime() throws {
        let items = Store.inMemory().collection("items")
        let text = "group == $args.g"
        let path = try DocumentPath("group")
        for value in [1, 2, 3] {
            #expect(
                try items.find(text, args: ["g": .number(Double(value))]).compiled().predicate
                    == .compare(path, .equal, .number(Double(value))))
        }
        for _ in 0..<2 {
            #expect {
                _ = try items.find("group == $args.missing", args: ["g": 1]).compiled()
            } throws: { error in
                (error as? QueryError)?.column == 10
            }
        }
    }

    @Test("A find compiled again is the same query; another argument, sort, limit or offset is another query")
    func compiledPerEverythingThatMakesIt() throws {
        let items = Store.inMemory().collection("items")
        let text = "group == $args.g"
        let group = try DocumentPath("group")
        let name = try DocumentPath("name")
        let base = items.find(text, args: ["g": "a"])
        #expect(try base.compiled() == base.compiled())
        #expect(
            try base.compiled() == DocumentQuery(collection: "items", predicate: .compare(group, .equal, .string("a"))))
        #expect(try items.find(text, args: ["g": "b"]).compiled().predicate == .compare(group, .equal, .string("b")))
        #expect(try base.sort("name").compiled().sort == [DocumentSort(name)])
        #expect(try base.sort("name", direction: .descending).compiled().sort == [DocumentSort(name, .descending)])
        #expect(try base.limit(5).compiled().limit == 5)
        #expect(try base.limit(5).offset(3).compiled().offset == 3)
        #expect(try base.compiled().limit == nil)
        #expect(try items.find(text, args: ["g": 1]).compiled().predicate == .compare(group, .equal, .number(1)))
        // Another collection, the same text and arguments.
        #expect(try Store.inMemory().collection("other").find(text, args: ["g": "a"]).compiled().collection == "other")
        // A bad sort path or limit fails each time, the same way.
        for _ in 0..<2 {
            #expect(throws: QueryError.self) { try base.sort("a..b").compiled() }
            #expect(throws: QueryError.self) { try base.limit(-1).compiled() }
        }
    }

    @Test("Texts and arguments that spell a character differently are different queries, byte for byte")
    func canonicallyEquivalentSpellingsKeptApart() throws {
        let items = Store.inMemory().collection("items")
        let composed = "caf\u{E9}"  // é as one scalar
        let decomposed = "cafe\u{301}"  // e, then a combining accent
        #expect(composed == decomposed)  // equal as Swift strings, which is why the caches compare bytes
        // In the text, as a literal: each compiled query compares with its own bytes.
        for literal in [composed, decomposed, composed] {
            let query = try items.find("name == '\(literal)'", args: [:]).compiled()
            #expect(Self.comparedBytes(query.predicate) == Array(literal.utf8))
        }
        // As an argument.
        for value in [composed, decomposed, composed] {
            let query = try items.find("name == $args.n", args: ["n": .string(value)]).compiled()
            #expect(Self.comparedBytes(query.predicate) == Array(value.utf8))
        }
        #expect(ExactText(composed) != ExactText(decomposed))
        #expect(ExactText(composed) == ExactText("caf\u{E9}"))
    }
}
