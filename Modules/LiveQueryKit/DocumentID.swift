import DocumentStoreKit
import Foundation
import PersistenceKit
import TetherJSON

/// `_id`s for documents written without one, as Ditto does: a new UUID string.
enum DocumentID {
    /// The document with an `_id` (a new UUID if it had none), and that `_id`.
    static func ensuring(_ document: JSONValue, collection: String) throws -> (id: String, value: JSONValue) {
        guard case .object(var members) = document else {
            throw PersistenceError(.invalidDocument, "a document must be a JSON object", collection: collection)
        }
        if members["_id"] == nil { members["_id"] = .string(UUID().uuidString.lowercased()) }
        let stored = try StoredDocument(.object(members), collection: collection)
        return (stored.id, stored.body)
    }
}
