import DocumentStoreKit
import Testing
import TetherJSON

@testable import LiveQueryKit

/// The tokens of query texts already lexed: the same as the lexer's, bounded, and never standing in for a failure.
@Suite("Live queries: query texts lexed once")
struct QueryTokenCacheTests {
    static func lexed(_ text: String) throws -> [String] {
        var lexer = QueryLexer(text)
        return try lexer.tokens().map { "\($0.token)@\($0.column)" }
    }

    @Test("A text seen before gives the lexer's tokens without lexing it again")
    func keptTokens() throws {
        let cache = QueryTokenCache(capacity: 8)
        let text = "store_id == $args.sid && (price < 10 || name LIKE 'a%')"
        #expect(!cache.isKept(text))
        let first = try cache.tokens(text).map { "\($0.token)@\($0.column)" }
        #expect(cache.isKept(text))
        let again = try cache.tokens(text).map { "\($0.token)@\($0.column)" }
        #expect(first == (try Self.lexed(text)))
        #expect(again == first)
        #expect(cache.count == 1)
    }

    @Test("A text that fails to lex is not kept, and fails with the same column each time")
    func failuresAreNotKept() {
        let cache = QueryTokenCache(capacity: 8)
        for _ in 0..<2 {
            #expect {
                _ = try cache.tokens("name == 'open")
            } throws: { error in
                (error as? QueryError)?.column == 9
            }
        }
        #expect(!cache.isKept("name == 'open"))
        #expect(cache.count == 0)
    }

    @Test("Bounded: a new text past the capacity empties the cache first, so it never holds more")
    func bounded() throws {
        let cache = QueryTokenCache(capacity: 8)
        for index in 0..<20 {
            _ = try cache.tokens("n == \(index)")
            #expect(cache.count <= 8)
        }
        // Emptied by the 9th and the 17th: the last four are kept.
        #expect(cache.count == 4)
        #expect((16..<20).allSatisfy { cache.isKept("n == \($0)") })
        #expect(!cache.isKept("n == 15"))
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
}
