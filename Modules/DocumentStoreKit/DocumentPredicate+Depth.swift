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
    /// Checks what a store checks before running the query: its predicate's depth.
    ///
    /// - Throws: `PersistenceError.Kind.invalidQuery` when the predicate nests deeper than
    ///   ``DocumentPredicate/maximumDepth``.
    public func checkRunnable() throws(PersistenceError) {
        let depth = predicate.depth
        guard depth <= DocumentPredicate.maximumDepth else {
            throw PersistenceError(
                .invalidQuery,
                "the condition nests 'not', 'and' and 'or' \(depth) deep; at most \(DocumentPredicate.maximumDepth) is allowed",
                collection: collection)
        }
    }
}
