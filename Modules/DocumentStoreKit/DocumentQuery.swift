public import PersistenceKit
import TetherJSON

/// A compiled query over one collection: which documents (``predicate``), in what order (``sort``, then `_id`), and
/// which slice of them (``offset``, ``limit``). LiveQueryKit compiles its query language to this; every
/// ``DocumentStore`` runs it with the same results.
///
/// ```swift
/// let query = try DocumentQuery(
///     collection: "items",
///     predicate: .compare(try DocumentPath("store_id"), .equal, .string("abc123")),
///     sort: [DocumentSort(try DocumentPath("name"))], limit: 50)
/// let items = try await store.documents(matching: query)
/// ```
public struct DocumentQuery: Sendable, Hashable {
    /// The collection the query reads.
    public let collection: String
    /// Which documents match.
    public var predicate: DocumentPredicate
    /// The order, key by key; documents that compare equal on every key are ordered by `_id`.
    public var sort: [DocumentSort]
    /// At most this many documents; nil for all.
    public var limit: Int?
    /// Skip this many documents first.
    public var offset: Int

    /// Makes a query, checking the collection name and the slice.
    ///
    /// - Throws: `PersistenceError.Kind.invalidCollectionName`, or `PersistenceError.Kind.invalidQuery` for a
    ///   negative limit or offset, or a predicate deeper than ``DocumentPredicate/maximumDepth``.
    public init(
        collection: String, predicate: DocumentPredicate = .all, sort: [DocumentSort] = [], limit: Int? = nil,
        offset: Int = 0
    ) throws(PersistenceError) {
        try CollectionName.validate(collection)
        if let limit, limit < 0 {
            throw PersistenceError(.invalidQuery, "limit must be 0 or more, not \(limit)", collection: collection)
        }
        guard offset >= 0 else {
            throw PersistenceError(.invalidQuery, "offset must be 0 or more, not \(offset)", collection: collection)
        }
        self.collection = collection
        self.predicate = predicate
        self.sort = sort
        self.limit = limit
        self.offset = offset
        try checkRunnable()
    }

    /// Whether the result depends on order and slice only through the predicate: no sort, limit or offset.
    public var isUnordered: Bool {
        sort.isEmpty && limit == nil && offset == 0
    }
}

/// One sort key: a path and a direction.
public struct DocumentSort: Sendable, Hashable {
    /// Which way a key sorts.
    public enum Direction: Sendable, Hashable {
        /// Smallest first.
        case ascending
        /// Largest first.
        case descending
    }

    /// The field sorted on.
    public let path: DocumentPath
    /// The direction.
    public let direction: Direction

    /// Makes a sort key.
    public init(_ path: DocumentPath, _ direction: Direction = .ascending) {
        self.path = path
        self.direction = direction
    }
}

/// A field inside a document: member names from the top, `address.city` for `["address", "city"]`.
public struct DocumentPath: Sendable, Hashable, CustomStringConvertible {
    /// The member names, outermost first.
    public let components: [String]

    /// Parses a dotted path (`"address.city"`).
    ///
    /// - Throws: `PersistenceError.Kind.invalidQuery` when a component is empty or has characters other than
    ///   letters, digits, `_` and `-`.
    public init(_ dotted: String) throws(PersistenceError) {
        try self.init(components: dotted.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
    }

    /// Makes a path from its components.
    ///
    /// - Throws: `PersistenceError.Kind.invalidQuery` when there are none, or one is empty or has characters
    ///   other than ASCII letters, digits, `_` and `-`.
    public init(components: [String]) throws(PersistenceError) {
        guard !components.isEmpty else { throw PersistenceError(.invalidQuery, "a field path cannot be empty") }
        for component in components {
            let valid =
                !component.isEmpty
                && component.utf8.allSatisfy { byte in
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                }
            guard valid else {
                throw PersistenceError(
                    .invalidQuery,
                    "'\(components.joined(separator: "."))' is not a field path: each part is one or more letters, digits, '_' or '-'"
                )
            }
        }
        self.components = components
    }

    /// `a.b.c`.
    public var description: String { components.joined(separator: ".") }
}

/// A literal a predicate compares with. Only scalars: a field holding an array or object equals none of them.
public enum ScalarValue: Sendable, Hashable, CustomStringConvertible {
    /// `null`; a missing field counts as null.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number (integers and decimals compare by value).
    case number(Double)
    /// A string (compared byte by byte in UTF-8, as SQLite's BINARY collation does).
    case string(String)

    /// The literal as JSON text.
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): JSONValue.number(value).jsonText
        case .string(let value): JSONValue.string(value).jsonText
        }
    }
}

/// Which documents a query matches. Missing fields count as `null`; comparisons between different types are false
/// (so `!=` is true); ordering (`<` …) applies to numbers and strings only.
public indirect enum DocumentPredicate: Sendable, Hashable {
    /// Every document.
    case all
    /// `path op literal`.
    case compare(DocumentPath, ComparisonOperator, ScalarValue)
    /// `path IN [literals]`: equal to any of them (false for an empty list).
    case isIn(DocumentPath, [ScalarValue])
    /// `contains(path, literal)`: an array field with an element equal to the literal, or a string field with the
    /// string literal as a substring.
    case contains(DocumentPath, ScalarValue)
    /// `path LIKE pattern`: a string field matching a pattern where `%` is any run of characters, `_` any one
    /// character, and `\` makes the next one literal. Case-sensitive.
    case like(DocumentPath, String)
    /// Negation.
    case not(DocumentPredicate)
    /// All of them (true when empty).
    case and([DocumentPredicate])
    /// Any of them (false when empty).
    case or([DocumentPredicate])
}

/// A comparison operator.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `==`
    case equal = "=="
    /// `!=`
    case notEqual = "!="
    /// `<`
    case less = "<"
    /// `<=`
    case lessOrEqual = "<="
    /// `>`
    case greater = ">"
    /// `>=`
    case greaterOrEqual = ">="
}
