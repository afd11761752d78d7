public import TetherJSON

/// A document as a store holds it: its `_id` and its JSON object.
public struct StoredDocument: Sendable, Hashable {
    /// The document's `_id`.
    public let id: String
    /// The whole document, `_id` included.
    public let body: JSONValue

    /// Checks that `body` is a JSON object with a non-empty string `_id`, and makes a document of it.
    ///
    /// - Throws: ``PersistenceError/Kind/invalidDocument`` saying what is missing.
    public init(_ body: JSONValue, collection: String? = nil) throws(PersistenceError) {
        guard case .object(let members) = body else {
            throw PersistenceError(
                .invalidDocument, "a document must be a JSON object, not \(body.kindName)", collection: collection)
        }
        guard let idValue = members["_id"] else {
            throw PersistenceError(.invalidDocument, "the document has no _id", collection: collection)
        }
        guard case .string(let id) = idValue, !id.isEmpty else {
            throw PersistenceError(
                .invalidDocument, "_id must be a non-empty string, not \(idValue.jsonText)", collection: collection)
        }
        self.id = id
        self.body = body
    }

    /// Parses JSON text and checks it as ``init(_:collection:)`` does.
    ///
    /// - Throws: ``PersistenceError/Kind/invalidJSON`` with the line and column, or
    ///   ``PersistenceError/Kind/invalidDocument``.
    public init(json: String, collection: String? = nil) throws(PersistenceError) {
        let body: JSONValue
        do {
            body = try JSONValue(parsing: json)
        } catch {
            throw PersistenceError(
                .invalidJSON, "the document is not valid JSON: \(error)", collection: collection, cause: error)
        }
        try self.init(body, collection: collection)
    }

    /// Makes a document whose body is already known to be valid (a store reading back what it wrote).
    package init(validatedID id: String, body: JSONValue) {
        self.id = id
        self.body = body
    }
}

extension JSONValue {
    /// `object`, `array`, `string`, `number`, `bool` or `null`, for messages.
    package var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
