/// A query that cannot run: what was expected, and where — with the query and a caret under the column.
///
/// ```
/// expected a value after '==', found the end of the query
///   store_id ==
///              ^ (column 12)
/// ```
public struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public let message: String
    /// The query text.
    public let query: String
    /// The column of the problem, from 1 (in characters); nil when the problem is not at one place (an unknown
    /// sort path given apart from the text).
    public let column: Int?

    /// Makes an error.
    public init(_ message: String, query: String, column: Int?) {
        self.message = message
        self.query = query
        self.column = column
    }

    /// The message, the query, and a caret under the column.
    public var description: String {
        guard let column else { return "\(message)\n  \(query)" }
        let caret = String(repeating: " ", count: max(0, column - 1)) + "^"
        return "\(message)\n  \(query)\n  \(caret) (column \(column))"
    }
}
