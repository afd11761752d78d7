public import PersistenceKit

/// An index declared on fields of one collection, so that queries filtering on them find their documents without
/// reading the whole collection (``DocumentStore/createIndex(_:)``).
///
/// ```swift
/// try await store.createIndex(DocumentIndex(collection: "items", fields: ["store_id", "name"]))
/// ```
///
/// Put the fields a query compares for equality first, then the one it sorts or ranges on: an index on
/// `store_id, name` serves `store_id == …` and `store_id == … && name > …`, not `name > …` alone.
public struct DocumentIndex: Sendable, Hashable, CustomStringConvertible {
    /// The most fields one index may have.
    public static let maximumFields = 8

    /// The collection.
    public let collection: String
    /// The fields, in the index's order.
    public let fields: [DocumentPath]

    /// Makes an index on `fields` of `collection`.
    ///
    /// - Throws: `PersistenceError.Kind.invalidCollectionName`, or `PersistenceError.Kind.invalidQuery` when there
    ///   are no fields, more than ``maximumFields``, or one named twice.
    public init(collection: String, fields: [DocumentPath]) throws(PersistenceError) {
        try CollectionName.validate(collection)
        guard !fields.isEmpty else {
            throw PersistenceError(.invalidQuery, "an index needs at least one field", collection: collection)
        }
        guard fields.count <= Self.maximumFields else {
            throw PersistenceError(
                .invalidQuery, "an index has at most \(Self.maximumFields) fields, not \(fields.count)",
                collection: collection)
        }
        var seen: Set<DocumentPath> = []
        for field in fields where !seen.insert(field).inserted {
            throw PersistenceError(
                .invalidQuery, "'\(field)' is named twice in the index", collection: collection)
        }
        self.collection = collection
        self.fields = fields
    }

    /// Makes an index on the dotted paths `fields` (`"address.city"`) of `collection`.
    ///
    /// - Throws: `PersistenceError.Kind.invalidQuery` naming a path that is not one (see `DocumentPath`), and the
    ///   errors of ``init(collection:fields:)-(_,[DocumentPath])``.
    public init(collection: String, fields: [String]) throws(PersistenceError) {
        var paths: [DocumentPath] = []
        for field in fields {
            do {
                paths.append(try DocumentPath(field))
            } catch {
                throw error.adding(collection: collection)
            }
        }
        try self.init(collection: collection, fields: paths)
    }

    /// `items(store_id, name)`.
    public var description: String {
        "\(collection)(\(fields.map(\.description).joined(separator: ", ")))"
    }
}
