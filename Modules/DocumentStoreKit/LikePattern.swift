/// A `LIKE` pattern: `%` matches any run of characters (none included), `_` exactly one, and `\` makes the next
/// character literal. Case-sensitive; characters are Unicode scalars. Stores use this one matcher (the SQLite
/// adapter registers it as an SQL function), so `LIKE` means the same everywhere.
public struct LikePattern: Sendable, Hashable {
    enum Token: Hashable {
        case literal(Unicode.Scalar)
        case one
        case any
    }

    let tokens: [Token]

    /// Compiles a pattern. A trailing lone `\` matches a backslash.
    public init(_ pattern: String) {
        var tokens: [Token] = []
        var escaped = false
        for scalar in pattern.unicodeScalars {
            if escaped {
                tokens.append(.literal(scalar))
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if scalar == "%" {
                if tokens.last != .any { tokens.append(.any) }
            } else if scalar == "_" {
                tokens.append(.one)
            } else {
                tokens.append(.literal(scalar))
            }
        }
        if escaped { tokens.append(.literal("\\")) }
        self.tokens = tokens
    }

    /// The pattern in SQL's `LIKE` syntax with `\` as the escape character, every literal `%`, `_` and `\` escaped:
    /// an engine whose `LIKE` compares code points, case-sensitively (PostgreSQL under `COLLATE "C"`), matches
    /// exactly what ``matches(_:)`` matches. A trailing lone `\`, which SQL refuses, comes out escaped.
    package var sqlText: String {
        var text = ""
        for token in tokens {
            switch token {
            case .any: text += "%"
            case .one: text += "_"
            case .literal(let scalar):
                if scalar == "%" || scalar == "_" || scalar == "\\" { text += "\\" }
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    /// Whether `string` matches the whole pattern.
    public func matches(_ string: String) -> Bool {
        let scalars = Array(string.unicodeScalars)
        // Greedy matching with one backtrack point per `%`: linear in practice, O(n·m) at worst.
        var s = 0
        var t = 0
        var starToken = -1
        var starScalar = 0
        while s < scalars.count {
            if t < tokens.count {
                switch tokens[t] {
                case .any:
                    starToken = t
                    starScalar = s
                    t += 1
                    continue
                case .one:
                    s += 1
                    t += 1
                    continue
                case .literal(let scalar) where scalar == scalars[s]:
                    s += 1
                    t += 1
                    continue
                case .literal:
                    break
                }
            }
            guard starToken >= 0 else { return false }
            t = starToken + 1
            starScalar += 1
            s = starScalar
        }
        while t < tokens.count, tokens[t] == .any { t += 1 }
        return t == tokens.count
    }
}
