import TetherConcurrency

/// Query texts already lexed, by text: observing, running or changing a `find` compiles its text each time, and an
/// app observes the same few texts over and over (a row per item, each with its own `$args`). The tokens depend on
/// the text alone, so a text seen before skips the lexer; the parser still binds each call's `$args`. Texts that
/// fail to lex are not kept (their error is made again).
///
/// Bounded: once ``capacity`` texts are kept, the next new one empties the cache first — an app whose texts vary
/// without end (values written into the text instead of `$args`) pays the lexer, never memory.
final class QueryTokenCache: Sendable {
    /// The process's cache, which every compiled query goes through.
    static let shared = QueryTokenCache(capacity: 256)

    /// How many texts are kept at most.
    let capacity: Int
    private let tokensByText = LockedValue<[String: [PositionedToken]]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The tokens of `query`, lexed now unless kept.
    func tokens(_ query: String) throws(QueryError) -> [PositionedToken] {
        if let kept = tokensByText.withLock({ $0[query] }) { return kept }
        var lexer = QueryLexer(query)
        let tokens = try lexer.tokens()
        let emptied = tokensByText.withLock { kept -> [String: [PositionedToken]]? in
            var emptied: [String: [PositionedToken]]?
            if kept.count >= capacity {
                emptied = kept
                kept = Dictionary(minimumCapacity: capacity)
            }
            kept[query] = tokens
            return emptied
        }
        _ = consume emptied  // released here, outside the lock
        return tokens
    }

    /// Whether the tokens of `query` are kept.
    func isKept(_ query: String) -> Bool {
        tokensByText.withLock { $0[query] != nil }
    }

    /// How many texts are kept.
    var count: Int {
        tokensByText.withLock { $0.count }
    }
}
