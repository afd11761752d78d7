/// A persistence operation failed: what went wrong, and where — the file, the collection, the document, the key.
///
/// The store or cache that threw stays usable for other work: a failed write changes nothing, and a transaction
/// that threw was rolled back as a whole.
///
/// ```swift
/// do {
///     try await store.insert(["_id": "a1", "name": "Pear"], into: "items")
/// } catch let error as PersistenceError where error.kind == .duplicateID {
///     print(error)  // duplicateID: a document with _id "a1" is already in "items" (collection items, id a1)
/// }
/// ```
public struct PersistenceError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        // A struct over a private enum, not a public enum: a kind added later breaks no user's exhaustive
        // `switch` (compare with `==`, or switch with a `default:`).
        private enum Value: String, Sendable, Hashable, CaseIterable {
            case invalidJSON, invalidDocument, invalidCollectionName, invalidQuery, duplicateID, missingDirectory,
                readOnly, cannotOpen, diskFull, corrupt, foreignFile, busy, ioError, closed, other
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The text given as a document is not valid JSON.
        public static var invalidJSON: Self { Self(.invalidJSON) }
        /// A document is not a JSON object, or has no `_id`, or its `_id` is not a non-empty string.
        public static var invalidDocument: Self { Self(.invalidDocument) }
        /// A collection name is empty, too long, or has characters other than letters, digits, `_`, `-` and `.`.
        public static var invalidCollectionName: Self { Self(.invalidCollectionName) }
        /// A query cannot be run as given (a bad path, limit or offset).
        public static var invalidQuery: Self { Self(.invalidQuery) }
        /// `insert` found a document with the same `_id` already in the collection.
        public static var duplicateID: Self { Self(.duplicateID) }
        /// The directory that should hold the file does not exist.
        public static var missingDirectory: Self { Self(.missingDirectory) }
        /// The file or its directory cannot be written (permissions, or a read-only file system).
        public static var readOnly: Self { Self(.readOnly) }
        /// The file could not be opened or created for another reason.
        public static var cannotOpen: Self { Self(.cannotOpen) }
        /// The disk (or the database's size limit) is full: the write was not made.
        public static var diskFull: Self { Self(.diskFull) }
        /// The file is not a database, or is damaged.
        public static var corrupt: Self { Self(.corrupt) }
        /// The file is something other than what was asked for — another program's database, a text file — and is
        /// left exactly as it was.
        public static var foreignFile: Self { Self(.foreignFile) }
        /// Another connection held a lock for longer than the busy timeout.
        public static var busy: Self { Self(.busy) }
        /// The operating system reported an I/O error.
        public static var ioError: Self { Self(.ioError) }
        /// The store or cache was closed.
        public static var closed: Self { Self(.closed) }
        /// Anything else the database reported.
        public static var other: Self { Self(.other) }

        /// The kind's name, as logs and messages show it: "invalidJSON".
        public var name: String { value.rawValue }

        /// ``name``.
        public var description: String { name }

        /// Every kind this version knows, for tests and tables.
        package static var allCases: [Self] { Value.allCases.map(Self.init) }
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// What was wrong, in a sentence.
    public let message: String
    /// The database file, when there is one.
    public let file: String?
    /// The collection the operation was on.
    public let collection: String?
    /// The document's `_id`, or the cache key.
    public let id: String?
    /// The underlying error (a database error, a JSON parse error, …).
    public let cause: (any Error)?

    /// Makes an error.
    public init(
        _ kind: Kind, _ message: String, file: String? = nil, collection: String? = nil, id: String? = nil,
        cause: (any Error)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.file = file
        self.collection = collection
        self.id = id
        self.cause = cause
    }

    /// The same error, with context filled in where it was missing.
    public func adding(file: String? = nil, collection: String? = nil, id: String? = nil) -> PersistenceError {
        PersistenceError(
            kind, message, file: self.file ?? file, collection: self.collection ?? collection, id: self.id ?? id,
            cause: cause)
    }

    /// `kind: message (file …, collection …, id …)`.
    public var description: String {
        var context: [String] = []
        if let file { context.append("file \(file)") }
        if let collection { context.append("collection \(collection)") }
        if let id { context.append("id \(id)") }
        let suffix = context.isEmpty ? "" : " (\(context.joined(separator: ", ")))"
        return "\(kind.name): \(message)\(suffix)"
    }
}
