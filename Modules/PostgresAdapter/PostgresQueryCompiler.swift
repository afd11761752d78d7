package import DocumentStoreKit
package import PostgresNIO

/// Compiles a `DocumentQuery` to PostgreSQL over `tether_documents` (bodies as `jsonb`), with bound parameters only:
/// literals, patterns and field names always travel as parameters, never as SQL text — except the paths of declared
/// indexes (`indexed`), which the application named in its schema and `DocumentPath` limits to letters, digits, `_`
/// and `-`: PostgreSQL uses an expression index only for the expression it was built on, `body -> 'store_id'`, never
/// for one whose key is a parameter.
///
/// The semantics are `DocumentPredicate.matches(_:)`'s, exactly:
/// - a field is read with `->` per component, so a missing field (or a key applied to an array) is SQL `NULL`, and
///   every condition guards against it so that it is true or false, never `NULL` — `NOT` and `OR` stay two-valued;
/// - equality and membership compare `jsonb` values, which are typed (`1` is not `"1"`) and numeric (`1` is `1.0`);
/// - strings order by their UTF-8 bytes (`COLLATE "C"`), whatever the database's collation;
/// - sorting ranks types as the in-memory order does (null and missing, Booleans, numbers, strings, the rest), then
///   orders within a rank, then by `_id`.
package struct PostgresQueryCompiler {
    private(set) var binds = PostgresBindings()
    /// The paths of the collection's declared indexes, written into the SQL so that the indexes apply.
    let indexed: Set<DocumentPath>
    /// The value expression of each path used so far: a path read twice binds its keys once.
    private var values: [DocumentPath: String] = [:]

    init(indexed: Set<DocumentPath> = []) {
        self.indexed = indexed
    }

    /// `SELECT id, body::text … WHERE … ORDER BY … LIMIT … OFFSET …`.
    package static func select(
        _ query: DocumentQuery, from table: String, indexed: Set<DocumentPath> = []
    ) -> PostgresQuery {
        var compiler = PostgresQueryCompiler(indexed: indexed)
        let collection = compiler.bind(query.collection)
        let condition = compiler.condition(query.predicate)
        var sql = "SELECT id, body::text FROM \(table) WHERE collection = \(collection) AND \(condition) ORDER BY "
        for key in query.sort {
            let direction = key.direction == .ascending ? "ASC" : "DESC"
            let value = compiler.value(key.path)
            sql += "\(rank(value)) \(direction), "
            sql += "(CASE WHEN jsonb_typeof(\(value)) IN ('boolean', 'number') THEN \(value) END) \(direction), "
            sql +=
                "(CASE WHEN jsonb_typeof(\(value)) = 'string' THEN \(value) #>> '{}' END) COLLATE \"C\" \(direction), "
        }
        sql += "id ASC"
        if let limit = query.limit { sql += " LIMIT \(compiler.bind(Int64(limit)))" }
        if query.offset > 0 { sql += " OFFSET \(compiler.bind(Int64(query.offset)))" }
        return PostgresQuery(unsafeSQL: sql, binds: compiler.binds)
    }

    /// `SELECT count(*) … WHERE …`.
    package static func count(
        _ query: DocumentQuery, from table: String, indexed: Set<DocumentPath> = []
    ) -> PostgresQuery {
        var compiler = PostgresQueryCompiler(indexed: indexed)
        let collection = compiler.bind(query.collection)
        let condition = compiler.condition(query.predicate)
        return PostgresQuery(
            unsafeSQL: "SELECT count(*) FROM \(table) WHERE collection = \(collection) AND \(condition)",
            binds: compiler.binds)
    }

    /// The expression a declared index is built on, and that queries on its path use: `(body -> 'a' -> 'b')`. Safe
    /// as SQL text because a path's components are letters, digits, `_` and `-` only.
    static func indexedValue(_ path: DocumentPath) -> String {
        "(body" + path.components.map { " -> '\($0)'" }.joined() + ")"
    }

    /// Null and missing 0, Booleans 1, numbers 2, strings 3, arrays and objects 4.
    static func rank(_ value: String) -> String {
        """
        (CASE jsonb_typeof(\(value)) WHEN 'boolean' THEN 1 WHEN 'number' THEN 2 WHEN 'string' THEN 3 \
        WHEN 'array' THEN 4 WHEN 'object' THEN 4 ELSE 0 END)
        """
    }

    // MARK: Conditions

    mutating func condition(_ predicate: DocumentPredicate) -> String {
        switch predicate {
        case .all:
            return "true"
        case .compare(let path, let op, let literal):
            switch op {
            case .equal: return equal(path, literal)
            case .notEqual: return "NOT \(equal(path, literal))"
            case .less: return ordered(path, "<", literal)
            case .lessOrEqual: return ordered(path, "<=", literal)
            case .greater: return ordered(path, ">", literal)
            case .greaterOrEqual: return ordered(path, ">=", literal)
            }
        case .isIn(let path, let literals):
            guard !literals.isEmpty else { return "false" }
            return literals.count == 1 ? equal(path, literals[0]) : isIn(path, literals)
        case .contains(let path, let literal):
            let value = value(path)
            let element = bind(literal.description)
            // CASE, not AND: PostgreSQL may evaluate AND's terms in any order, and jsonb_array_elements refuses
            // anything but an array.
            var sql = "(\(value) IS NOT NULL AND CASE jsonb_typeof(\(value)) WHEN 'array' THEN EXISTS "
            sql += "(SELECT 1 FROM jsonb_array_elements(\(value)) AS e(value) WHERE e.value = \(element)::jsonb)"
            if case .string(let needle) = literal {
                sql += " WHEN 'string' THEN strpos(\(value) #>> '{}', \(bind(needle))) > 0"
            }
            return sql + " ELSE false END)"
        case .like(let path, let pattern):
            let value = value(path)
            let pattern = bind(LikePattern(pattern).sqlText)
            return
                "(\(value) IS NOT NULL AND jsonb_typeof(\(value)) = 'string' AND (\(value) #>> '{}') COLLATE \"C\" LIKE \(pattern))"
        case .not(let inner):
            return "NOT \(condition(inner))"
        case .and(let predicates):
            guard !predicates.isEmpty else { return "true" }
            return balanced(predicates[...], "AND")
        case .or(let predicates):
            guard !predicates.isEmpty else { return "false" }
            return balanced(predicates[...], "OR")
        }
    }

    /// `(a OP b OP c …)`, in groups of `DocumentPredicate.groupSize` and groups of groups, as the SQLite compiler
    /// writes them: every store parses the same shape.
    mutating func balanced(_ predicates: ArraySlice<DocumentPredicate>, _ op: String) -> String {
        guard predicates.count > 1 else { return condition(predicates.first!) }
        let levels = DocumentPredicate.levels(forTerms: predicates.count)
        guard levels > 1 else { return "(" + predicates.map { condition($0) }.joined(separator: " \(op) ") + ")" }
        var groupSize = DocumentPredicate.groupSize
        for _ in 2..<levels { groupSize *= DocumentPredicate.groupSize }
        var groups: [String] = []
        var start = predicates.startIndex
        while start < predicates.endIndex {
            let end = min(start + groupSize, predicates.endIndex)
            groups.append(balanced(predicates[start..<end], op))
            start = end
        }
        return "(" + groups.joined(separator: " \(op) ") + ")"
    }

    /// Typed equality; a missing field is null. `value = literal` on its own, so that an index on the path serves it.
    mutating func equal(_ path: DocumentPath, _ literal: ScalarValue) -> String {
        let value = value(path)
        if literal == .null { return "(\(value) IS NULL OR \(value) = 'null'::jsonb)" }
        return "(\(value) IS NOT NULL AND \(value) = \(bind(literal.description))::jsonb)"
    }

    /// Membership in a list of any length, bound as one array parameter (an index on the path serves `= ANY`).
    mutating func isIn(_ path: DocumentPath, _ literals: [ScalarValue]) -> String {
        let value = value(path)
        let list = bind(literals.filter { $0 != .null }.map(\.description))
        let nulls = literals.contains(.null) ? " OR \(value) IS NULL OR \(value) = 'null'::jsonb" : ""
        return "((\(value) IS NOT NULL AND \(value) = ANY(\(list)::text[]::jsonb[]))\(nulls))"
    }

    /// Ordering applies to numbers (as `jsonb`, numerically) and strings (by bytes) only.
    mutating func ordered(_ path: DocumentPath, _ op: String, _ literal: ScalarValue) -> String {
        switch literal {
        case .number:
            let value = value(path)
            let bound = bind(literal.description)
            return "(\(value) IS NOT NULL AND jsonb_typeof(\(value)) = 'number' AND \(value) \(op) \(bound)::jsonb)"
        case .string(let string):
            let value = value(path)
            let bound = bind(string)
            return
                "(\(value) IS NOT NULL AND jsonb_typeof(\(value)) = 'string' AND (\(value) #>> '{}') COLLATE \"C\" \(op) \(bound))"
        case .null, .bool:
            return "false"
        }
    }

    // MARK: Pieces

    /// The field's value (`jsonb`, or `NULL` when missing): `(body -> $2::text -> $3::text)`.
    mutating func value(_ path: DocumentPath) -> String {
        if indexed.contains(path) { return Self.indexedValue(path) }
        if let known = values[path] { return known }
        var expression = "(body"
        for component in path.components { expression += " -> \(bind(component))::text" }
        expression += ")"
        values[path] = expression
        return expression
    }

    mutating func bind(_ value: String) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    mutating func bind(_ value: Int64) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    mutating func bind(_ value: [String]) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }
}
