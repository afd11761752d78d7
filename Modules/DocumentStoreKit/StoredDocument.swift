public import PersistenceKit
public import TetherJSON

/// A document as a store holds it: its `_id` and its JSON object.
public struct StoredDocument: Sendable, Hashable {
    /// The document's `_id`.
    public let id: String
    /// The whole document, `_id` included.
    public let body: JSONValue

    /// Checks that `body` is a JSON object with a non-empty string `_id`, that it nests no deeper than JSON text
    /// can be read back (`JSONValue.maximumNestingDepth`, 512) and that every number in it is finite (JSON has no
    /// NaN or infinity), and makes a document of it. Every store checks this before writing, so what one store
    /// accepts, every store stores and reads back the same.
    ///
    /// - Throws: `PersistenceError.Kind.invalidDocument` saying what is wrong, and where (`a.b[3].c`).
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
        if let problem = Self.problem(in: body) {
            throw PersistenceError(.invalidDocument, problem, collection: collection, id: id)
        }
        self.id = id
        self.body = body
    }

    /// What makes `body` unstorable — too deep, or a number that is not finite — with where; nil when nothing does.
    /// Walks the document without recursion; the path is built only for a document that has a problem.
    static func problem(in body: JSONValue) -> String? {
        guard firstProblem(in: body, tracingPaths: false) != nil else { return nil }
        return firstProblem(in: body, tracingPaths: true)
    }

    private static func firstProblem(in body: JSONValue, tracingPaths: Bool) -> String? {
        var stack: [(value: JSONValue, depth: Int, path: String)] = [(body, 1, "")]
        func child(_ path: String, _ step: @autoclosure () -> String) -> String {
            tracingPaths ? path + step() : ""
        }
        while let (value, depth, path) = stack.popLast() {
            switch value {
            case .number(let number) where !number.isFinite:
                return "the number at \(path) is \(number); JSON numbers are finite (store NaN or infinity as a string)"
            case .array(let elements):
                guard depth <= JSONValue.maximumNestingDepth else {
                    return "the document nests deeper than \(JSONValue.maximumNestingDepth) levels at \(path)"
                }
                for (index, element) in elements.enumerated() {
                    stack.append((element, depth + 1, child(path, "[\(index)]")))
                }
            case .object(let members):
                guard depth <= JSONValue.maximumNestingDepth else {
                    return "the document nests deeper than \(JSONValue.maximumNestingDepth) levels at \(path)"
                }
                for (key, member) in members {
                    stack.append((member, depth + 1, child(path, path.isEmpty ? key : ".\(key)")))
                }
            default:
                break
            }
        }
        return nil
    }

    /// Parses JSON text and checks it as ``init(_:collection:)`` does.
    ///
    /// - Throws: `PersistenceError.Kind.invalidJSON` with the line and column, or
    ///   `PersistenceError.Kind.invalidDocument`.
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
