import TetherJSON

/// Queries as text, in the query language's own spelling, with their arguments' values bound: for logs and the
/// inspector (`group == "a" && n > 3 ORDER BY seq DESC LIMIT 100`).
extension DocumentPredicate: CustomStringConvertible {
    public var description: String {
        switch self {
        case .all: "true"
        case .compare(let path, let comparison, let value): "\(path) \(comparison.rawValue) \(value)"
        case .isIn(let path, let values): "\(path) IN [\(values.map(\.description).joined(separator: ", "))]"
        case .contains(let path, let value): "contains(\(path), \(value))"
        case .like(let path, let pattern): "\(path) LIKE \(JSONValue.string(pattern).jsonText)"
        case .not(let predicate): "!(\(predicate))"
        case .and(let predicates): predicates.isEmpty ? "true" : predicates.map { "(\($0))" }.joined(separator: " && ")
        case .or(let predicates): predicates.isEmpty ? "false" : predicates.map { "(\($0))" }.joined(separator: " || ")
        }
    }
}

extension DocumentQuery: CustomStringConvertible {
    public var description: String {
        var text = predicate.description
        if !sort.isEmpty {
            text +=
                " ORDER BY "
                + sort.map { "\($0.path) \($0.direction == .ascending ? "ASC" : "DESC")" }
                .joined(separator: ", ")
        }
        if let limit { text += " LIMIT \(limit)" }
        if offset > 0 { text += " OFFSET \(offset)" }
        return text
    }
}
