/// JSON text that could not be parsed: what was expected, and where.
///
/// ```
/// line 1, column 12: expected ',' or '}' after an object member, found 'x'
/// ```
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public let message: String
    /// The byte offset of the problem in the UTF-8 text, from 0.
    public let offset: Int
    /// The line of the problem, from 1.
    public let line: Int
    /// The column of the problem (in bytes), from 1.
    public let column: Int

    /// Makes an error at a position.
    public init(message: String, offset: Int, line: Int, column: Int) {
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// `line L, column C: message`.
    public var description: String {
        "line \(line), column \(column): \(message)"
    }
}
