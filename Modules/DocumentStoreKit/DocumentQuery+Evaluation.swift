import TetherJSON

extension DocumentQuery {
    /// Runs the query over `documents` in memory: filter, sort, slice. The reference semantics (see
    /// ``DocumentPredicate/matches(_:)``).
    public func apply(to documents: some Sequence<StoredDocument>) -> [StoredDocument] {
        // Each document's sort fields read once, not once per comparison.
        var matching = documents.filter { predicate.matches($0.body) }.map { (key: orderKey(of: $0), document: $0) }
        matching.sort { areInIncreasingOrder($0.key, $1.key) }
        let start = min(offset, matching.count)
        let end = limit.map { min(start + $0, matching.count) } ?? matching.count
        return matching[start..<end].map(\.document)
    }

    /// A document's place in the query's order: its sort fields' values, read once, and its `_id`. Comparing two
    /// keys is comparing their documents without reading the documents' fields again — what a sort, or a binary
    /// search that meets the same documents often, wants.
    public struct OrderKey: Sendable {
        /// The value at each sort key's path (nil: missing).
        let values: [JSONValue?]
        let id: String
    }

    /// `document`'s place in the query's order.
    public func orderKey(of document: StoredDocument) -> OrderKey {
        OrderKey(values: sort.map { document.body[path: $0.path.components] }, id: document.id)
    }

    /// The query's order: each sort key in turn, then `_id` ascending. Within one key, missing and null come
    /// first, then Booleans (false before true), numbers, strings (by UTF-8 bytes), and arrays and objects (all
    /// equal); `descending` reverses that.
    public func areInIncreasingOrder(_ a: StoredDocument, _ b: StoredDocument) -> Bool {
        precedes(a.id, b.id) { (a.body[path: sort[$0].path.components], b.body[path: sort[$0].path.components]) }
    }

    /// The query's order (see `areInIncreasingOrder(_:_:)` on documents), on keys read before.
    public func areInIncreasingOrder(_ a: OrderKey, _ b: OrderKey) -> Bool {
        precedes(a.id, b.id) { (a.values[$0], b.values[$0]) }
    }

    /// Whether the document with `_id` `a` goes before the one with `_id` `b`, given the values of each sort key
    /// (by its index) in the two.
    private func precedes(_ a: String, _ b: String, values: (Int) -> (JSONValue?, JSONValue?)) -> Bool {
        for (index, key) in sort.enumerated() {
            let (x, y) = values(index)
            let order = Self.compare(x, y)
            if order != 0 { return key.direction == .ascending ? order < 0 : order > 0 }
        }
        return UTF8Order.compare(a, b) < 0
    }

    static func rank(_ value: JSONValue?) -> Int {
        switch value ?? .null {
        case .null: 0
        case .bool: 1
        case .number: 2
        case .string: 3
        case .array, .object: 4
        }
    }

    static func compare(_ a: JSONValue?, _ b: JSONValue?) -> Int {
        let (ra, rb) = (rank(a), rank(b))
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.bool(let x)?, .bool(let y)?): return x == y ? 0 : (x ? 1 : -1)
        case (.number(let x)?, .number(let y)?): return x < y ? -1 : (x > y ? 1 : 0)
        case (.string(let x)?, .string(let y)?): return UTF8Order.compare(x, y)
        default: return 0
        }
    }
}
