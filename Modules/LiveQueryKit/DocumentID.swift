import DocumentStoreKit
import Foundation
import PersistenceKit
import TetherJSON

/// `_id`s for documents written without one, as Ditto does: a new UUID string.
enum DocumentID {
    /// The document with an `_id` (a new UUID if it had none), and that `_id`. The store the document goes to checks
    /// the rest (`StoredDocument`), so a document that has a string `_id` is handed on as it is, walked once.
    static func ensuring(_ document: JSONValue, collection: String) throws -> (id: String, value: JSONValue) {
        guard case .object(var members) = document else {
            throw PersistenceError(.invalidDocument, "a document must be a JSON object", collection: collection)
        }
        switch members["_id"] {
        case .string(let id)?:
            return (id, document)
        case nil:
            let id = UUID().uuidString.lowercased()
            members["_id"] = .string(id)
            return (id, .object(members))
        case .some:
            // Not a string: `StoredDocument` says what is wrong with it.
            let stored = try StoredDocument(document, collection: collection)
            return (stored.id, stored.body)
        }
    }
}
