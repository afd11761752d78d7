public import PersistenceKit

extension DocumentPredicate {
    /// The deepest a predicate may nest `not`, `and` and `or`: 16. Stores evaluate and compile predicates
    /// recursively, and SQLite's parser refuses SQL nested much deeper (its stack holds about 100 entries; 18 levels
    /// of the heaviest conditions fill it). Every store refuses a deeper predicate alike, with
    /// `PersistenceError.Kind.invalidQuery`, before running anything.
    ///
    /// How many terms an `and` or `or` holds, and how many values an `isIn` lists, is not limited — but an `and` or
    /// `or` of more than ``groupSize`` terms is evaluated in groups of groups, and counts as one more level for each
    /// (two up to 4,096 terms, three up to 262,144).
    public static let maximumDepth = 16

    /// How many terms of an `and` or `or` one level holds.
    public static let groupSize = 64

    /// How deep `not`, `and` and `or` nest (0 for a single condition), measured without recursion: a predicate built
    /// in code may be deeper than the stack.
    public var depth: Int {
        var deepest = 0
        var stack: [(predicate: DocumentPredicate, depth: Int)] = [(self, 0)]
        while let (predicate, depth) = stack.popLast() {
            switch predicate {
            case .not(let inner):
                deepest = max(deepest, depth + 1)
                stack.append((inner, depth + 1))
            case .and(let terms), .or(let terms):
                let levels = Self.levels(forTerms: terms.count)
                deepest = max(deepest, depth + levels)
                for term in terms { stack.append((term, depth + levels)) }
            case .all, .compare, .isIn, .contains, .like:
                break
            }
        }
        return deepest
    }

    /// The first number among the predicate's values that is not finite (NaN or an infinity), if any. No two stores
    /// would compare with it alike — SQLite binds NaN as NULL — and no document holds one, so every store refuses it.
    public var nonFiniteNumber: Double? {
        var stack = [self]
        while let predicate = stack.popLast() {
            switch predicate {
            case .compare(_, _, let value), .contains(_, let value):
                if case .number(let number) = value, !number.isFinite { return number }
            case .isIn(_, let values):
                for case .number(let number) in values where !number.isFinite { return number }
            case .not(let inner):
                stack.append(inner)
            case .and(let terms), .or(let terms):
                stack.append(contentsOf: terms)
            case .all, .like:
                break
            }
        }
        return nil
    }

    /// The levels an `and` or `or` of `count` terms takes: one per grouping by ``groupSize``.
    public static func levels(forTerms count: Int) -> Int {
        var levels = 1
        var capacity = groupSize
        while count > capacity {
            levels += 1
            capacity = capacity.multipliedReportingOverflow(by: groupSize).overflow ? .max : capacity * groupSize
        }
        return levels
    }
}

extension DocumentQuery {
    /// Checks what a store checks before running the query: its predicate's depth, and that every number it compares
    /// with is finite.
    ///
    /// - Throws: `PersistenceError.Kind.invalidQuery` when the predicate nests deeper than
    ///   ``DocumentPredicate/maximumDepth``, or compares with NaN or an infinity.
    public func checkRunnable() throws(PersistenceError) {
        if let number = predicate.nonFiniteNumber {
            throw PersistenceError(
                .invalidQuery,
                "the condition compares with \(number); queries compare finite numbers only, as documents hold only finite ones",
                collection: collection)
        }
        let depth = predicate.depth
        guard depth <= DocumentPredicate.maximumDepth else {
            throw PersistenceError(
                .invalidQuery,
                "the condition nests 'not', 'and' and 'or' \(depth) deep; at most \(DocumentPredicate.maximumDepth) is allowed",
                collection: collection)
        }
    }
}
