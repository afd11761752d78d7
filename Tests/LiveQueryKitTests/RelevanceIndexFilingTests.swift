import DocumentStoreKit
import Testing
import TetherJSON

@testable import LiveQueryKit

/// Which equality of a query's `&&` the relevance index files it under, seen from the index itself: the one the
/// fewest queries require, and counts that go down again when queries go.
@Suite("Live queries: the equality a query is filed under")
struct RelevanceIndexFilingTests {
    static func query(_ text: String) throws -> DocumentQuery {
        try DocumentQuery(collection: "items", predicate: QueryParser.predicate(text, args: [:]))
    }

    /// Adds `texts` to `index`, each evaluated with an empty result.
    static func observe(_ texts: [String], in index: inout RelevanceIndex) throws {
        for text in texts {
            let query = try query(text)
            index.add(query)
            index.published(query, ids: [], previous: [])
        }
    }

    /// How many queries a change to `body` reaches.
    static func reached(by body: JSONValue, in index: RelevanceIndex) throws -> Int {
        var changed = ChangedDocuments.Changed(capacity: 1)
        let document = try StoredDocument(body, collection: "items")
        changed.record(document.id, document)
        return index.candidates(in: "items", reachedBy: changed).count
    }

    @Test("Queries that share one value and differ in another leave the shared one as soon as they are two")
    func leaveShared() throws {
        var index = RelevanceIndex()
        try Self.observe(["type == 'item' && store == 's1'"], in: &index)
        // Alone, it is filed under its first equality: every item reaches it.
        #expect(try Self.reached(by: ["_id": "a", "type": "item", "store": "s9"], in: index) == 1)
        try Self.observe(["type == 'item' && store == 's2'"], in: &index)
        // Two now require `type == 'item'`, one each store: both are filed under their store.
        #expect(try Self.reached(by: ["_id": "a", "type": "item", "store": "s9"], in: index) == 0)
        #expect(try Self.reached(by: ["_id": "a", "type": "item", "store": "s1"], in: index) == 1)
        #expect(index.filedCount(in: "items") == 2)
    }

    @Test("An IN costs each of its values; a value many queries require is left for one fewer do")
    func inCosts() throws {
        var index = RelevanceIndex()
        try Self.observe(
            ["group == 'g' && store IN ['s1', 's2', 's3']", "group == 'h' && store IN ['s1', 's2', 's3']"], in: &index)
        // Each `IN` costs three (its own three values), each group one: filed under their group.
        #expect(try Self.reached(by: ["_id": "a", "group": "x", "store": "s1"], in: index) == 0)
        #expect(try Self.reached(by: ["_id": "a", "group": "g", "store": "s9"], in: index) == 1)
    }

    @Test("A query that goes takes its counts with it: the next query of the shape is filed as if it never came")
    func countsGoDown() throws {
        var index = RelevanceIndex()
        // A query with no equality keeps the collection in the index throughout; every change reaches it.
        try Self.observe(["n > 1"], in: &index)
        let texts = (0..<5).map { "store == 's1' && type == 't\($0)'" }
        try Self.observe(texts, in: &index)
        for text in texts { index.remove(try Self.query(text), holding: []) }
        #expect(index.filedCount(in: "items") == 0)
        // Were the five still counted, `store == 's1'` would cost more than `type == 'u'`, and a document of store
        // `s1` and another type would not reach it.
        try Self.observe(["store == 's1' && type == 'u'"], in: &index)
        #expect(try Self.reached(by: ["_id": "a", "store": "s1", "type": "v"], in: index) == 2)
    }

    @Test("Removing queries one by one unfiles each, where it was last filed")
    func unfiled() throws {
        var index = RelevanceIndex()
        let texts = (0..<6).map { "type == 'item' && store == 's\($0)'" }
        try Self.observe(texts, in: &index)
        #expect(index.filedCount(in: "items") == 6)
        for (removed, text) in texts.enumerated() {
            index.remove(try Self.query(text), holding: [])
            #expect(index.filedCount(in: "items") == texts.count - removed - 1)
        }
    }
}
