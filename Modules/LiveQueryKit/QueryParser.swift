import DocumentStoreKit
import TetherJSON

/// Parses the query language and binds its `$args` in one pass, producing PersistenceKit's `DocumentPredicate`.
/// User text only ever becomes paths and literals — values a store binds as parameters, never SQL.
///
/// ```
/// query      := or
/// or         := and ( '||' and )*
/// and        := unary ( '&&' unary )*
/// unary      := '!' unary | primary
/// primary    := '(' query ')'
///             | 'contains' '(' path ',' value ')'
///             | path ( '==' | '!=' | '<' | '<=' | '>' | '>=' ) value
///             | path 'IN' ( '[' value ( ',' value )* ']' | '[' ']' | $args.name )
///             | path 'LIKE' value
/// path       := identifier ( '.' identifier )*
/// value      := string | number | 'true' | 'false' | 'null' | $args.name
/// ```
///
/// Parentheses and `!` nest at most ``maximumNesting`` deep: the parser recurses there, and the predicate it makes
/// must stay within `DocumentPredicate.maximumDepth`, which every store enforces.
struct QueryParser {
    /// How deep parentheses and `!` may nest: one less than `DocumentPredicate.maximumDepth`, since the top level may
    /// add an `and` or `or`.
    static let maximumNesting = DocumentPredicate.maximumDepth - 1

    let query: String
    let tokens: [PositionedToken]
    let args: [String: JSONValue]
    var position = 0
    /// The parentheses and `!` open around the current token.
    var nesting = 0

    /// The tokens of up to 256 query texts, for the process: a text lexed once, whatever its `$args`.
    static let tokenCache = BoundedCache<ExactText, [PositionedToken]>(capacity: 256)

    /// Compiles `query` with `args`.
    static func predicate(_ query: String, args: [String: JSONValue]) throws(QueryError) -> DocumentPredicate {
        let tokens = try tokenCache.value(for: ExactText(query)) { () throws(QueryError) in
            var lexer = QueryLexer(query)
            return try lexer.tokens()
        }
        guard tokens.first?.token != .end else {
            throw QueryError("the query is empty: use findAll() to match every document", query: query, column: 1)
        }
        var parser = QueryParser(query: query, tokens: tokens, args: args)
        let predicate = try parser.or()
        guard parser.current.token == .end else {
            throw parser.error("expected '&&', '||' or the end of the query, found \(parser.current.token.display)")
        }
        return predicate
    }

    var current: PositionedToken { tokens[position] }

    mutating func advance() -> PositionedToken {
        defer { position = min(position + 1, tokens.count - 1) }
        return tokens[position]
    }

    func error(_ message: String, at column: Int? = nil) -> QueryError {
        QueryError(message, query: query, column: column ?? current.column)
    }

    mutating func expect(_ symbol: QueryToken.Symbol, _ context: String) throws(QueryError) {
        guard current.token == .symbol(symbol) else {
            throw error("expected '\(symbol.rawValue)' \(context), found \(current.token.display)")
        }
        _ = advance()
    }

    // MARK: Logic

    mutating func or() throws(QueryError) -> DocumentPredicate {
        var terms = [try and()]
        while current.token == .symbol(.or) {
            _ = advance()
            terms.append(try and())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    mutating func and() throws(QueryError) -> DocumentPredicate {
        var terms = [try unary()]
        while current.token == .symbol(.and) {
            _ = advance()
            terms.append(try unary())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    mutating func unary() throws(QueryError) -> DocumentPredicate {
        if current.token == .symbol(.not) {
            try enterNesting()
            _ = advance()
            defer { nesting -= 1 }
            return .not(try unary())
        }
        return try primary()
    }

    /// One more level of parentheses or `!`, refused beyond ``maximumNesting`` at the current token's column.
    mutating func enterNesting() throws(QueryError) {
        guard nesting < Self.maximumNesting else {
            throw error("the query nests parentheses and '!' deeper than \(Self.maximumNesting) levels")
        }
        nesting += 1
    }

    mutating func primary() throws(QueryError) -> DocumentPredicate {
        switch current.token {
        case .symbol(.openParen):
            try enterNesting()
            _ = advance()
            let inner = try or()
            try expect(.closeParen, "to close the parenthesis")
            nesting -= 1
            return inner
        case .keyword(.contains):
            _ = advance()
            try expect(.openParen, "after 'contains'")
            let path = try path()
            try expect(.comma, "between the field and the value in contains(field, value)")
            let value = try scalar(for: "contains")
            try expect(.closeParen, "to close contains(field, value)")
            return .contains(path, value)
        case .identifier:
            return try comparison()
        case .end:
            throw error("expected a condition, found the end of the query")
        default:
            throw error("expected a field name, '(', '!' or contains(…), found \(current.token.display)")
        }
    }

    mutating func comparison() throws(QueryError) -> DocumentPredicate {
        let path = try path()
        let operatorToken = advance()
        switch operatorToken.token {
        case .symbol(let symbol):
            let op: ComparisonOperator
            switch symbol {
            case .equal: op = .equal
            case .notEqual: op = .notEqual
            case .less: op = .less
            case .lessOrEqual: op = .lessOrEqual
            case .greater: op = .greater
            case .greaterOrEqual: op = .greaterOrEqual
            default:
                throw error(
                    "expected an operator (==, !=, <, <=, >, >=, IN, LIKE) after '\(path)', found \(operatorToken.token.display)",
                    at: operatorToken.column)
            }
            let valueColumn = current.column
            let value = try scalar(for: "'\(op.rawValue)'")
            if op != .equal, op != .notEqual {
                switch value {
                case .number, .string: break
                case .null, .bool:
                    throw error(
                        "type mismatch: '\(op.rawValue)' compares numbers or strings, not \(value)", at: valueColumn)
                }
            }
            return .compare(path, op, value)
        case .keyword(.in):
            return .isIn(path, try list())
        case .keyword(.like):
            let valueColumn = current.column
            guard case .string(let pattern) = try scalar(for: "LIKE") else {
                throw error("type mismatch: LIKE takes a string pattern", at: valueColumn)
            }
            return .like(path, pattern)
        default:
            var message =
                "expected an operator (==, !=, <, <=, >, >=, IN, LIKE) after '\(path)', found \(operatorToken.token.display)"
            if case .keyword(.contains) = operatorToken.token {
                message += "; to test whether an array holds a value, write contains(\(path), value)"
            }
            throw error(message, at: operatorToken.column)
        }
    }

    // MARK: Operands

    mutating func path() throws(QueryError) -> DocumentPath {
        let start = current
        guard case .identifier(let first) = advance().token else {
            throw error("expected a field name, found \(start.token.display)", at: start.column)
        }
        var components = [first]
        while current.token == .symbol(.dot) {
            _ = advance()
            let part = advance()
            guard case .identifier(let name) = part.token else {
                throw error("expected a field name after '.', found \(part.token.display)", at: part.column)
            }
            components.append(name)
        }
        do {
            return try DocumentPath(components: components)
        } catch {
            throw self.error(
                "'\(components.joined(separator: "."))' is not a field path: use ASCII letters, digits and '_'",
                at: start.column)
        }
    }

    /// A literal or an argument, as a scalar.
    mutating func scalar(for context: String) throws(QueryError) -> ScalarValue {
        let token = advance()
        switch token.token {
        case .string(let value): return .string(value)
        case .number(let value): return .number(value)
        case .keyword(.true): return .bool(true)
        case .keyword(.false): return .bool(false)
        case .keyword(.null): return .null
        case .argument(let name):
            let value = try argument(name, at: token.column)
            guard let scalar = Self.scalar(value) else {
                throw error(
                    "type mismatch: $args.\(name) is \(value.kindName); \(context) needs a string, number, Boolean or null",
                    at: token.column)
            }
            return scalar
        default:
            throw error("expected a value after \(context), found \(token.token.display)", at: token.column)
        }
    }

    /// `[v, …]`, `[]`, or `$args.name` holding an array.
    mutating func list() throws(QueryError) -> [ScalarValue] {
        let start = current
        if case .argument(let name) = start.token {
            _ = advance()
            guard case .array(let elements) = try argument(name, at: start.column) else {
                throw error("type mismatch: IN needs a list, and $args.\(name) is not an array", at: start.column)
            }
            var values: [ScalarValue] = []
            for element in elements {
                guard let scalar = Self.scalar(element) else {
                    throw error(
                        "type mismatch: $args.\(name) holds \(element.kindName); IN lists hold strings, numbers, Booleans and null",
                        at: start.column)
                }
                values.append(scalar)
            }
            return values
        }
        try expect(.openBracket, "after IN (a list: [\"a\", \"b\"])")
        var values: [ScalarValue] = []
        if current.token == .symbol(.closeBracket) {
            _ = advance()
            return values
        }
        while true {
            values.append(try scalar(for: "IN ["))
            if current.token == .symbol(.comma) {
                _ = advance()
                continue
            }
            try expect(.closeBracket, "to close the IN list")
            return values
        }
    }

    func argument(_ name: String, at column: Int) throws(QueryError) -> JSONValue {
        guard let value = args[name] else {
            let known = args.keys.sorted().map { "$args.\($0)" }.joined(separator: ", ")
            throw error(
                "unknown parameter $args.\(name)" + (known.isEmpty ? " (no args were given)" : " (given: \(known))"),
                at: column)
        }
        let numbers: [JSONValue] = if case .array(let elements) = value { elements } else { [value] }
        for case .number(let number) in numbers where !number.isFinite {
            throw error(
                "$args.\(name) is \(number); queries compare finite numbers only, as documents hold only finite ones",
                at: column)
        }
        return value
    }

    static func scalar(_ value: JSONValue) -> ScalarValue? {
        switch value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .number(let number): .number(number)
        case .string(let string): .string(string)
        case .array, .object: nil
        }
    }
}
