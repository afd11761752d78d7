package import DocumentStoreKit
package import GRDB

/// Compiles a `DocumentQuery` to SQL over `tether_documents`, with SQLite's JSON functions and bound parameters:
/// literals always travel as arguments, never as SQL text, and so do paths — except the paths of declared indexes
/// (`indexed`), which the application named in its schema and `DocumentPath` limits to letters, digits, `_` and
/// `-`: SQLite uses an expression index only for the very expression it was built on, `json_extract(body,
/// '$."store_id"')`, never for one whose path is a parameter. Every condition evaluates to 0 or 1 (never NULL), so
/// `NOT` and `OR` behave as in `DocumentPredicate.matches(_:)`.
package struct SQLiteQueryCompiler {
    private(set) var arguments: [(any DatabaseValueConvertible)?] = []
    /// The paths of the collection's declared indexes, written into the SQL so that the indexes apply.
    let indexed: Set<DocumentPath>

    init(indexed: Set<DocumentPath> = []) {
        self.indexed = indexed
    }

    /// `SELECT id, body … WHERE … ORDER BY … LIMIT … OFFSET …`.
    package static func select(
        _ query: DocumentQuery, indexed: Set<DocumentPath> = []
    ) -> (sql: String, arguments: StatementArguments) {
        var compiler = SQLiteQueryCompiler(indexed: indexed)
        compiler.arguments.append(query.collection)
        let condition = compiler.condition(query.predicate)
        var sql = "SELECT id, body FROM tether_documents WHERE collection = ? AND (\(condition)) ORDER BY "
        for key in query.sort {
            let direction = key.direction == .ascending ? "ASC" : "DESC"
            let rank = compiler.rank(key.path)
            let value = compiler.sortValue(key.path)
            sql += "\(rank) \(direction), \(value) \(direction), "
        }
        sql += "id ASC"
        if query.limit != nil || query.offset > 0 {
            sql += " LIMIT ? OFFSET ?"
            compiler.arguments.append(query.limit ?? -1)
            compiler.arguments.append(query.offset)
        }
        return (sql, StatementArguments(compiler.arguments))
    }

    /// `SELECT count(*) … WHERE …`.
    package static func count(
        _ query: DocumentQuery, indexed: Set<DocumentPath> = []
    ) -> (sql: String, arguments: StatementArguments) {
        var compiler = SQLiteQueryCompiler(indexed: indexed)
        compiler.arguments.append(query.collection)
        let condition = compiler.condition(query.predicate)
        return (
            "SELECT count(*) FROM tether_documents WHERE collection = ? AND (\(condition))",
            StatementArguments(compiler.arguments)
        )
    }

    /// The JSON path for SQLite: `$."a"."b"` (components are letters, digits, `_` and `-` only).
    static func jsonPath(_ path: DocumentPath) -> String {
        "$" + path.components.map { ".\"\($0)\"" }.joined()
    }

    /// The expression a declared index is built on, and that queries on its path use: `json_extract(body,
    /// '$."a"."b"')`. Safe as SQL text because a path's components are letters, digits, `_` and `-` only.
    static func indexedValue(_ path: DocumentPath) -> String {
        "json_extract(body, '\(jsonPath(path))')"
    }

    // MARK: Conditions

    mutating func condition(_ predicate: DocumentPredicate) -> String {
        switch predicate {
        case .all:
            return "1"
        case .compare(let path, let op, let literal) where Self.isID(path):
            return compareID(op, literal)
        case .isIn(let path, let literals) where Self.isID(path):
            let ids = literals.compactMap { literal -> String? in
                if case .string(let id) = literal { id } else { nil }
            }
            guard !ids.isEmpty else { return "0" }
            arguments.append("[" + ids.map { ScalarValue.string($0).description }.joined(separator: ",") + "]")
            return "(id IN (SELECT value FROM json_each(?)))"
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
            guard !literals.isEmpty else { return "0" }
            return literals.count == 1 ? equal(path, literals[0]) : isIn(path, literals)
        case .contains(let path, let literal):
            // Arguments are appended in the order their `?`s appear: the type's path, json_each's path, the element.
            let type = typeOf(path)
            arguments.append(Self.jsonPath(path))
            let element = elementEqual(literal)
            var sql = "(CASE \(type) WHEN 'array' THEN EXISTS (SELECT 1 FROM json_each(body, ?) AS e WHERE \(element))"
            if case .string(let needle) = literal {
                let value = value(path)
                arguments.append(needle)
                sql += " WHEN 'text' THEN instr(\(value), ?) > 0"
            }
            return sql + " ELSE 0 END)"
        case .like(let path, let pattern):
            let type = typeOf(path)
            arguments.append(pattern)
            let value = value(path)
            return "(\(type) = 'text' AND tether_like(?, \(value)))"
        case .not(let inner):
            return "NOT \(condition(inner))"
        case .and(let predicates):
            guard !predicates.isEmpty else { return "1" }
            return balanced(predicates[...], "AND")
        case .or(let predicates):
            guard !predicates.isEmpty else { return "0" }
            return balanced(predicates[...], "OR")
        }
    }

    /// Whether `path` is `_id`: the row's own `id` column holds the same text (a document's `_id` is always a
    /// non-empty string), so a condition on it reads no JSON — an id lookup is an index seek, not a parse of each
    /// candidate's body.
    static func isID(_ path: DocumentPath) -> Bool {
        path.components == ["_id"]
    }

    /// A comparison of `_id` with `literal`, on the `id` column: only a string can equal or order with it.
    mutating func compareID(_ op: ComparisonOperator, _ literal: ScalarValue) -> String {
        guard case .string(let id) = literal else { return op == .notEqual ? "1" : "0" }
        arguments.append(id)
        return "(id \(op == .equal ? "=" : op.rawValue) ?)"
    }

    /// `(a OP b OP c …)`, in groups of `DocumentPredicate.groupSize` and groups of groups: SQLite parses a flat
    /// chain into a tree as deep as it is long, and refuses one deeper than 1,000; every parenthesis costs its
    /// parser's small stack. Grouped, 1,000 terms take 2 levels (`DocumentPredicate.levels(forTerms:)`).
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

    /// The longest list an indexed membership writes out as parameters (SQLite allows 32,766 in all).
    static let maximumIndexedList = 64

    /// Typed membership in a list of any length, with the list as one bound JSON array (SQLite limits the number
    /// of `?`s and the depth of an `OR` chain): equal, as ``equal(_:_:)`` decides, to one of its elements.
    mutating func isIn(_ path: DocumentPath, _ literals: [ScalarValue]) -> String {
        // Arguments are appended in the order their `?`s appear in the text.
        let list = "[" + literals.map(\.description).joined(separator: ",") + "]"
        var sql = ""
        if indexed.contains(path), literals.count <= Self.maximumIndexedList {
            // A membership an index can serve, one lookup per element, written as a list of parameters: the
            // planner cannot tell how long a json_each list is, and passes the index over. The typed check below
            // still decides.
            for literal in literals {
                switch literal {
                case .number(let number): arguments.append(number)
                case .string(let string): arguments.append(string)
                case .bool(let flag): arguments.append(flag ? 1 : 0)
                case .null: arguments.append(nil)
                }
            }
            let marks = Array(repeating: "?", count: literals.count).joined(separator: ", ")
            // JSON null, and a missing field, read as SQL NULL, which no list matches.
            let nulls = literals.contains(.null) ? " OR \(Self.indexedValue(path)) IS NULL" : ""
            sql += "(\(Self.indexedValue(path)) IN (\(marks))\(nulls)) AND "
        }
        arguments.append(list)
        sql += "EXISTS (SELECT 1 FROM json_each(?) AS v WHERE CASE WHEN v.type IN ('integer', 'real') THEN "
        sql += "\(typeOf(path)) IN ('integer', 'real') AND \(value(path)) = v.value "
        sql += "WHEN v.type = 'text' THEN \(typeOf(path)) = 'text' AND \(value(path)) = v.value "
        sql += "ELSE \(typeOf(path)) = v.type END)"
        return indexed.contains(path) ? "(" + sql + ")" : sql
    }

    /// Typed equality; a missing field is null.
    mutating func equal(_ path: DocumentPath, _ literal: ScalarValue) -> String {
        let type = typeOf(path)
        switch literal {
        case .null:
            return "(\(type) = 'null')"
        case .bool(let flag):
            return "(\(type) = '\(flag ? "true" : "false")')"
        case .number(let number):
            let value = value(path)
            arguments.append(number)
            return "(\(type) IN ('integer', 'real') AND \(value) = ?)"
        case .string(let string):
            let value = value(path)
            arguments.append(string)
            return "(\(type) = 'text' AND \(value) = ?)"
        }
    }

    /// Ordering applies to numbers and strings only.
    mutating func ordered(_ path: DocumentPath, _ op: String, _ literal: ScalarValue) -> String {
        switch literal {
        case .number(let number):
            let type = typeOf(path)
            let value = value(path)
            arguments.append(number)
            return "(\(type) IN ('integer', 'real') AND \(value) \(op) ?)"
        case .string(let string):
            let type = typeOf(path)
            let value = value(path)
            arguments.append(string)
            return "(\(type) = 'text' AND \(value) \(op) ?)"
        case .null, .bool:
            return "0"
        }
    }

    /// An element of `json_each` equal to the literal.
    mutating func elementEqual(_ literal: ScalarValue) -> String {
        switch literal {
        case .null: return "e.type = 'null'"
        case .bool(let flag): return "e.type = '\(flag ? "true" : "false")'"
        case .number(let number):
            arguments.append(number)
            return "(e.type IN ('integer', 'real') AND e.value = ?)"
        case .string(let string):
            arguments.append(string)
            return "(e.type = 'text' AND e.value = ?)"
        }
    }

    // MARK: Pieces

    /// The field's JSON type, with a missing field as 'null'.
    mutating func typeOf(_ path: DocumentPath) -> String {
        if indexed.contains(path) { return "IFNULL(json_type(body, '\(Self.jsonPath(path))'), 'null')" }
        arguments.append(Self.jsonPath(path))
        return "IFNULL(json_type(body, ?), 'null')"
    }

    mutating func value(_ path: DocumentPath) -> String {
        if indexed.contains(path) { return Self.indexedValue(path) }
        arguments.append(Self.jsonPath(path))
        return "json_extract(body, ?)"
    }

    /// Null and missing 0, Booleans 1, numbers 2, strings 3, arrays and objects 4.
    mutating func rank(_ path: DocumentPath) -> String {
        let type = typeOf(path)
        return """
            (CASE \(type) WHEN 'null' THEN 0 WHEN 'true' THEN 1 WHEN 'false' THEN 1 \
            WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'text' THEN 3 ELSE 4 END)
            """
    }

    /// The value for ordering within a rank (arrays and objects all equal).
    mutating func sortValue(_ path: DocumentPath) -> String {
        let type = typeOf(path)
        let value = value(path)
        return "(CASE WHEN \(type) IN ('true', 'false', 'integer', 'real', 'text') THEN \(value) END)"
    }
}
