import DocumentStoreKit
import Testing
import TetherJSON
import TetherTestingTraits

@Suite("A query's order: UTF-8 bytes for strings, keys read once agreeing with documents compared", .leakChecked)
struct QueryOrderTests {
    /// Strings whose byte order is easy to get wrong, including two that Swift's `==` finds equal.
    static let strings = [
        "", "a", "ab", "b", "Z", "item 10", "item 9", "\u{E9}", "e\u{301}", "\u{C4}", "\u{20AC}", "\u{1F600}",
        "\u{FFFF}", "\u{10FFFF}", "a string too long to be stored inline", "a string too long to be stored inline!",
    ]

    @Test("Strings compare by their UTF-8 bytes, as SQLite's BINARY collation does")
    func utf8Order() {
        for a in Self.strings {
            for b in Self.strings {
                let (x, y) = (Array(a.utf8), Array(b.utf8))
                let expected = x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
                #expect(UTF8Order.compare(a, b) == expected, "\(Array(a.unicodeScalars)) vs \(Array(b.unicodeScalars))")
            }
        }
    }

    @Test("Order keys compare as their documents do, on every kind of value and in both directions")
    func orderKeys() throws {
        let values: [JSONValue?] = [
            nil, .null, .bool(false), .bool(true), .number(-1), .number(2.5), .string(""), .string("e\u{301}"),
            .string("\u{E9}"), ["nested": 1], [1, 2],
        ]
        var documents: [StoredDocument] = []
        for (index, value) in values.enumerated() {
            for second in [0.0, 1.0] {
                var body: [String: JSONValue] = ["_id": .string("d\(index)-\(Int(second))"), "k": .number(second)]
                if let value { body["v"] = value }
                documents.append(try StoredDocument(.object(body), collection: "c"))
            }
        }
        for direction in [DocumentSort.Direction.ascending, .descending] {
            let query = try DocumentQuery(
                collection: "c",
                sort: [
                    DocumentSort(try DocumentPath("v"), direction), DocumentSort(try DocumentPath("k"), .descending),
                ])
            for a in documents {
                for b in documents {
                    #expect(
                        query.areInIncreasingOrder(query.orderKey(of: a), query.orderKey(of: b))
                            == query.areInIncreasingOrder(a, b), "\(a.id) vs \(b.id)")
                }
            }
            // A total order: sorting gives every document once, each before the next.
            let sorted = query.apply(to: documents.shuffled())
            #expect(sorted.count == documents.count)
            for (a, b) in zip(sorted, sorted.dropFirst()) { #expect(query.areInIncreasingOrder(a, b)) }
        }
    }
}
