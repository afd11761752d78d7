/// The query language's tokens.
enum QueryToken: Equatable, Sendable {
    case identifier(String)
    case string(String)
    case number(Double)
    case argument(String)  // $args.name
    case keyword(Keyword)
    case symbol(Symbol)
    case end

    enum Keyword: String, Sendable, CaseIterable {
        case `true`, `false`, null, `in`, like, contains
    }

    enum Symbol: String, Sendable {
        case equal = "=="
        case notEqual = "!="
        case lessOrEqual = "<="
        case greaterOrEqual = ">="
        case less = "<"
        case greater = ">"
        case and = "&&"
        case or = "||"
        case not = "!"
        case openParen = "("
        case closeParen = ")"
        case openBracket = "["
        case closeBracket = "]"
        case comma = ","
        case dot = "."
    }

    /// How the token reads in messages.
    var display: String {
        switch self {
        case .identifier(let name): "'\(name)'"
        case .string(let value): "the string \"\(value)\""
        case .number(let value): "the number \(value)"
        case .argument(let name): "'$args.\(name)'"
        case .keyword(let keyword): "'\(keyword.rawValue)'"
        case .symbol(let symbol): "'\(symbol.rawValue)'"
        case .end: "the end of the query"
        }
    }
}

/// A token and the column it starts at (from 1, in characters).
struct PositionedToken: Sendable {
    let token: QueryToken
    let column: Int
}

/// Splits query text into tokens. Strings take single or double quotes with `\` escapes; keywords are
/// case-insensitive (`IN`, `in`); identifiers are letters, digits and `_` (not starting with a digit).
struct QueryLexer {
    let query: String
    let characters: [Character]
    var index = 0

    init(_ query: String) {
        self.query = query
        self.characters = Array(query)
    }

    mutating func tokens() throws(QueryError) -> [PositionedToken] {
        var result: [PositionedToken] = []
        while true {
            let token = try next()
            result.append(token)
            if token.token == .end { return result }
        }
    }

    mutating func next() throws(QueryError) -> PositionedToken {
        while index < characters.count, characters[index].isWhitespace { index += 1 }
        let column = index + 1
        guard index < characters.count else { return PositionedToken(token: .end, column: column) }
        let character = characters[index]
        func positioned(_ token: QueryToken) -> PositionedToken { PositionedToken(token: token, column: column) }

        if let symbol = symbol(at: character) {
            index += symbol.rawValue.count
            return positioned(.symbol(symbol))
        }
        if character == "=" {
            throw QueryError("'=' is not an operator: use '==' to compare", query: query, column: column)
        }
        if character == "&" || character == "|" {
            throw QueryError(
                "'\(character)' is not an operator: use '\(character)\(character)'", query: query, column: column)
        }
        if character == "\"" || character == "'" {
            return positioned(.string(try string(quote: character, column: column)))
        }
        if character.isNumber || (character == "-" && index + 1 < characters.count && characters[index + 1].isNumber) {
            return positioned(.number(try number(column: column)))
        }
        if character == "$" { return positioned(.argument(try argument(column: column))) }
        if character.isLetter || character == "_" {
            let word = identifier()
            if let keyword = QueryToken.Keyword(rawValue: word.lowercased()) { return positioned(.keyword(keyword)) }
            return positioned(.identifier(word))
        }
        throw QueryError("unexpected character '\(character)'", query: query, column: column)
    }

    /// The symbol starting at the current character, two characters long if it can be (`<=` before `<`). Read in
    /// place: a query is lexed each time a `find` is observed, run or changed.
    func symbol(at character: Character) -> QueryToken.Symbol? {
        let following = index + 1 < characters.count ? characters[index + 1] : nil
        switch (character, following) {
        case ("=", "="): return .equal
        case ("!", "="): return .notEqual
        case ("<", "="): return .lessOrEqual
        case (">", "="): return .greaterOrEqual
        case ("&", "&"): return .and
        case ("|", "|"): return .or
        case ("<", _): return .less
        case (">", _): return .greater
        case ("!", _): return .not
        case ("(", _): return .openParen
        case (")", _): return .closeParen
        case ("[", _): return .openBracket
        case ("]", _): return .closeBracket
        case (",", _): return .comma
        case (".", _): return .dot
        default: return nil
        }
    }

    /// Whether `text` comes next, compared in place.
    func matches(_ text: String) -> Bool {
        var position = index
        for expected in text {
            guard position < characters.count, characters[position] == expected else { return false }
            position += 1
        }
        return true
    }

    mutating func identifier() -> String {
        let start = index
        while index < characters.count,
            characters[index].isLetter || characters[index].isNumber || characters[index] == "_"
        {
            index += 1
        }
        return String(characters[start..<index])
    }

    mutating func string(quote: Character, column: Int) throws(QueryError) -> String {
        index += 1
        var value = ""
        while index < characters.count {
            let character = characters[index]
            index += 1
            if character == quote { return value }
            if character == "\\" {
                guard index < characters.count else { break }
                let escaped = characters[index]
                index += 1
                switch escaped {
                case "n": value.append("\n")
                case "t": value.append("\t")
                case "r": value.append("\r")
                default: value.append(escaped)  // \\ \' \" and anything else stand for themselves
                }
            } else {
                value.append(character)
            }
        }
        throw QueryError("this string has no closing \(quote)", query: query, column: column)
    }

    mutating func number(column: Int) throws(QueryError) -> Double {
        let start = index
        if characters[index] == "-" { index += 1 }
        while index < characters.count,
            characters[index].isNumber || characters[index] == "." || characters[index] == "e"
                || characters[index] == "E"
                || ((characters[index] == "+" || characters[index] == "-")
                    && (characters[index - 1] == "e" || characters[index - 1] == "E"))
        {
            index += 1
        }
        let text = String(characters[start..<index])
        guard let value = Double(text), value.isFinite else {
            throw QueryError("'\(text)' is not a number", query: query, column: column)
        }
        return value
    }

    mutating func argument(column: Int) throws(QueryError) -> String {
        guard matches("$args.") else {
            throw QueryError("a parameter is written $args.name", query: query, column: column)
        }
        index += 6
        let name = identifier()
        guard !name.isEmpty, !(name.first?.isNumber ?? true) else {
            throw QueryError("expected a parameter name after '$args.'", query: query, column: index + 1)
        }
        return name
    }
}
