import TetherJSON

extension DocumentQuery {
    /// Runs the query over `documents` in memory: filter, sort, slice. The reference semantics (see
    /// ``DocumentPredicate/matches(_:)``).
    public func apply(to documents: some Sequence<StoredDocument>) -> [StoredDocument] {
        var matching = documents.filter { predicate.matches($0.body) }
        matching.sort(by: areInIncreasingOrder)
        let start = min(offset, matching.count)
        let end = limit.map { min(start + $0, matching.count) } ?? matching.count
        return Array(matching[start..<end])
    }

    /// The query's order: each sort key in turn, then `_id` ascending. Within one key, missing and null come
    /// first, then Booleans (false before true), numbers, strings (by UTF-8 bytes), and arrays and objects (all
    /// equal); `descending` reverses that.
    public func areInIncreasingOrder(_ a: StoredDocument, _ b: StoredDocument) -> Bool {
        for key in sort {
            let order = Self.compare(a.body[path: key.path.components], b.body[path: key.path.components])
            if order != 0 { return key.direction == .ascending ? order < 0 : order > 0 }
        }
        return UTF8Order.compare(a.id, b.id) < 0
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
