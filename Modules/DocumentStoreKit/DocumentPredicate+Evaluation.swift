public import TetherJSON

extension DocumentPredicate {
    /// Whether `document` matches: the reference semantics every ``DocumentStore`` implements (the SQLite adapter
    /// compiles the same rules to SQL, and the conformance suite checks that the two agree).
    public func matches(_ document: JSONValue) -> Bool {
        switch self {
        case .all:
            return true
        case .compare(let path, let op, let literal):
            let value = document[path: path.components]
            switch op {
            case .equal: return Self.equal(value, literal)
            case .notEqual: return !Self.equal(value, literal)
            case .less: return Self.order(value, literal).map { $0 < 0 } ?? false
            case .lessOrEqual: return Self.order(value, literal).map { $0 <= 0 } ?? false
            case .greater: return Self.order(value, literal).map { $0 > 0 } ?? false
            case .greaterOrEqual: return Self.order(value, literal).map { $0 >= 0 } ?? false
            }
        case .isIn(let path, let literals):
            let value = document[path: path.components]
            return literals.contains { Self.equal(value, $0) }
        case .contains(let path, let literal):
            switch document[path: path.components] {
            case .array(let elements)?:
                return elements.contains { Self.equal($0, literal) }
            case .string(let string)?:
                guard case .string(let needle) = literal else { return false }
                return UTF8Order.contains(string, needle)
            default:
                return false
            }
        case .like(let path, let pattern):
            guard case .string(let string)? = document[path: path.components] else { return false }
            return LikePattern(pattern).matches(string)
        case .not(let predicate):
            return !predicate.matches(document)
        case .and(let predicates):
            return predicates.allSatisfy { $0.matches(document) }
        case .or(let predicates):
            return predicates.contains { $0.matches(document) }
        }
    }

    /// Typed equality; a missing field is null.
    static func equal(_ value: JSONValue?, _ literal: ScalarValue) -> Bool {
        switch (value ?? .null, literal) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        default: false
        }
    }

    /// The sign of `value - literal` for two numbers or two strings; nil for anything else.
    static func order(_ value: JSONValue?, _ literal: ScalarValue) -> Int? {
        switch (value, literal) {
        case (.number(let a)?, .number(let b)): a < b ? -1 : (a > b ? 1 : 0)
        case (.string(let a)?, .string(let b)): UTF8Order.compare(a, b)
        default: nil
        }
    }
}

/// Strings compared as SQLite's BINARY collation does: byte by byte in UTF-8.
package enum UTF8Order {
    /// -1, 0 or 1.
    package static func compare(_ a: String, _ b: String) -> Int {
        // Native strings hold their UTF-8 contiguously: compared in place, without an iterator per string (a sort
        // compares many field values per result).
        let contiguous = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in
                for index in 0..<min(left.count, right.count) where left[index] != right[index] {
                    return left[index] < right[index] ? -1 : 1
                }
                return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
            }
        }
        if let order = contiguous ?? nil { return order }
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }

    /// Whether `needle`'s bytes occur in `haystack`'s (an empty needle always does).
    package static func contains(_ haystack: String, _ needle: String) -> Bool {
        let hay = Array(haystack.utf8)
        let pin = Array(needle.utf8)
        guard !pin.isEmpty else { return true }
        guard hay.count >= pin.count else { return false }
        for start in 0...(hay.count - pin.count) where hay[start] == pin[0] {
            if hay[start..<(start + pin.count)].elementsEqual(pin) { return true }
        }
        return false
    }
}
