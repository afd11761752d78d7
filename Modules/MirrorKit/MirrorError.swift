/// A response could not be mirrored: what was wrong, and where — the resource's URL, the path in the response, the
/// element and the document's id.
///
/// A response that fails is mirrored not at all: the collection keeps what the last good response left, and the
/// mirror's state (``MirrorState/error``) says why.
///
/// ```swift
/// if let error = mirror.lastError, error.kind == .invalidID {
///     print(error)  // invalidID: element 3 has no id "id" (url https://api.example.com/items, path items, element 3)
/// }
/// ```
public struct MirrorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        // A struct over a private enum: a kind added later breaks no user's exhaustive `switch`.
        private enum Value: String, Sendable, Hashable, CaseIterable {
            case notJSON, missingPath, notArrayOrObject, invalidID, duplicateID, unstorableDocument, invalidScope
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The resource's content is not JSON (no JSON transformer ran, or the body was not JSON).
        public static var notJSON: Self { Self(.notJSON) }
        /// The mirror's path names a member the response does not have.
        public static var missingPath: Self { Self(.missingPath) }
        /// What the path leads to is neither an array of documents nor one document.
        public static var notArrayOrObject: Self { Self(.notArrayOrObject) }
        /// An element has no id, or its id is not a non-empty string.
        public static var invalidID: Self { Self(.invalidID) }
        /// Two elements of one response have the same id.
        public static var duplicateID: Self { Self(.duplicateID) }
        /// The store refused a document (too deep, a number that is not finite); none of the response is written.
        public static var unstorableDocument: Self { Self(.unstorableDocument) }
        /// The mirror's scope is not a query.
        public static var invalidScope: Self { Self(.invalidScope) }

        /// The kind's name, as logs and messages show it: "invalidID".
        public var name: String { value.rawValue }

        /// ``name``.
        public var description: String { name }

        /// Every kind this version knows, for tests.
        package static var allCases: [Self] { Value.allCases.map(Self.init) }
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// What was wrong, in a sentence.
    public let message: String
    /// The resource's URL.
    public let url: String
    /// The mirror's path in the response (`data.items`), when it has one.
    public let path: String?
    /// The element of the response's array, counted from 0.
    public let element: Int?
    /// The document's id.
    public let id: String?

    /// Makes an error.
    public init(
        _ kind: Kind, _ message: String, url: String, path: String? = nil, element: Int? = nil, id: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.url = url
        self.path = path
        self.element = element
        self.id = id
    }

    /// `kind: message (url …, path …, element …, id …)`.
    public var description: String {
        var context = ["url \(url)"]
        if let path, !path.isEmpty { context.append("path \(path)") }
        if let element { context.append("element \(element)") }
        if let id { context.append("id \(id)") }
        return "\(kind.name): \(message) (\(context.joined(separator: ", ")))"
    }
}
