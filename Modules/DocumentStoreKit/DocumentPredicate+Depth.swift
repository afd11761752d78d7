public import PersistenceKit

extension DocumentPredicate {
    /// The deepest a predicate may nest `not`, `and` and `or`: 16. Stores evaluate and compile predicates
    /// recursively, and SQLite's parser refuses SQL nested much deeper (its stack holds about 100 entries; 18 levels
    /// of the heaviest conditions fill it). Every store refuses a deeper predicate alike, with
    /// `PersistenceError.Kind.invalidQuery`, before running anything.
    ///
    /// An `and` or `or` of more than ``groupSize`` terms is evaluated in groups of groups, and counts as one more
    /// level for each (two up to 4,096 terms); a predicate holds at most ``maximumConditions`` conditions in all, and
    /// how many values an `isIn` lists is not bounded.
    public static let maximumDepth = 16

    /// How many terms of an `and` or `or` one level holds.
    public static let groupSize = 64

    /// The most conditions — comparisons, memberships, `contains`, `like` — one predicate may hold: 4,096. SQLite
    /// compiles each value it compares with as a constant, and looks every new constant up among those before it, so
    /// a query's compilation takes time in the square of its conditions (10,000 take seconds, 40,000 over a minute).
    /// Every store refuses more alike. Many values of one field make one condition: `isIn`, however long its list.
    public static let maximumConditions = 4_096

    /// How deep `not`, `and` and `or` nest (0 for a single condition), measured without recursion: a predicate built
    /// in code may be deeper than the stack.
    public var depth: Int {
        shape.depth
    }

    /// How many conditions the predicate holds (see ``maximumConditions``).
    public var conditionCount: Int {
        shape.conditions
    }

    /// The first number among the predicate's values that is not finite (NaN or an infinity), if any. No two stores
    /// would compare with it alike — SQLite binds NaN as NULL — and no document holds one, so every store refuses it.
    public var nonFiniteNumber: Double? {
        shape.nonFinite
    }

    /// What a store checks, in one walk without recursion.
    var shape: (depth: Int, conditions: Int, nonFinite: Double?) {
        var deepest = 0
        var conditions = 0
        var nonFinite: Double?
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
            case .compare(_, _, let value), .contains(_, let value):
                conditions += 1
                if nonFinite == nil, case .number(let number) = value, !number.isFinite { nonFinite = number }
            case .isIn(_, let values):
                conditions += 1
                for case .number(let number) in values where nonFinite == nil && !number.isFinite { nonFinite = number }
            case .like:
                conditions += 1
            case .all:
                break
            }
        }
        return (deepest, conditions, nonFinite)
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
    /// Checks what a store checks before running the query: its predicate's depth and number of conditions, and that
    /// every number it compares with is finite.
    ///
    /// - Throws: `PersistenceError.Kind.invalidQuery` when the predicate nests deeper than
    ///   ``DocumentPredicate/maximumDepth``, holds more than ``DocumentPredicate/maximumConditions`` conditions, or
    ///   compares with NaN or an infinity.
    public func checkRunnable() throws(PersistenceError) {
        let shape = predicate.shape
        if let number = shape.nonFinite {
            throw PersistenceError(
                .invalidQuery,
                "the condition compares with \(number); queries compare finite numbers only, as documents hold only finite ones",
                collection: collection)
        }
        guard shape.conditions <= DocumentPredicate.maximumConditions else {
            throw PersistenceError(
                .invalidQuery,
                "the condition holds \(shape.conditions) comparisons; at most \(DocumentPredicate.maximumConditions) are allowed (for many values of one field, use one IN list)",
                collection: collection)
        }
        guard shape.depth <= DocumentPredicate.maximumDepth else {
            throw PersistenceError(
                .invalidQuery,
                "the condition nests 'not', 'and' and 'or' \(shape.depth) deep; at most \(DocumentPredicate.maximumDepth) is allowed",
                collection: collection)
        }
    }
}
