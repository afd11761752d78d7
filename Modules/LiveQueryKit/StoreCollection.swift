import DocumentStoreKit
public import TetherJSON

/// One collection of a ``Store``: write documents, find them once, or observe them.
public struct StoreCollection: Sendable {
    /// The collection's name.
    public let name: String
    /// The store the collection is in.
    public let store: Store

    /// Inserts or replaces the document in a transaction of its own; one without `_id` gets a new UUID. Returns the
    /// `_id`.
    ///
    /// - Throws: `PersistenceError` (`invalidDocument`, `invalidCollectionName`, a storage failure).
    @discardableResult
    public func upsert(_ document: JSONValue) async throws -> String {
        let name = name
        return try await store.write { try $0.collection(name).upsert(document) }
    }

    /// Inserts the document; fails with `PersistenceError.Kind.duplicateID` when its `_id` exists. Returns the `_id`.
    @discardableResult
    public func insert(_ document: JSONValue) async throws -> String {
        let name = name
        return try await store.write { try $0.collection(name).insert(document) }
    }

    /// Removes the document with `_id` `id`; returns whether there was one.
    @discardableResult
    public func remove(id: String) async throws -> Bool {
        let name = name
        return try await store.write { try $0.collection(name).remove(id: id) }
    }

    /// Declares an index on `fields` (dotted paths, `"address.city"`) of this collection, and builds it: queries
    /// that filter on them — equality first, then a range or the sort — read only the documents it leads them to,
    /// and so do the live queries' re-evaluations. Declaring it again does nothing.
    ///
    /// ```swift
    /// try await store.collection("items").createIndex(["store_id", "name"])
    /// ```
    ///
    /// - Throws: `PersistenceError.Kind.invalidQuery` naming a field that is not a path, and storage failures.
    public func createIndex(_ fields: [String]) async throws {
        try await store.documents.createIndex(DocumentIndex(collection: name, fields: fields))
    }

    /// The documents matching `query`, with `$args.name` parameters taken from `args`.
    ///
    /// ```swift
    /// items.find("store_id == $args.sid && price < 10", args: ["sid": "abc123"]).sort("name").limit(20)
    /// ```
    ///
    /// The text is compiled when the query is run or observed; an invalid query fails there with a ``QueryError``.
    public func find(_ query: String, args: [String: JSONValue] = [:]) -> PendingQuery {
        PendingQuery(collection: self, text: query, args: args)
    }

    /// Every document of the collection.
    public func findAll() -> PendingQuery {
        PendingQuery(collection: self, text: "true", predicate: { .all })
    }

    /// The document with `_id` `id`, to read, observe, update or remove.
    public func findByID(_ id: String) -> PendingIDQuery {
        PendingIDQuery(
            query: PendingQuery(
                collection: self, text: "_id == \(JSONValue.string(id).jsonText)",
                predicate: { .compare(try DocumentPath("_id"), .equal, .string(id)) }))
    }
}

/// One document by `_id` (see ``StoreCollection/findByID(_:)``).
public struct PendingIDQuery: Sendable {
    /// The same, as a query matching at most one document.
    public let query: PendingQuery

    /// The document, or nil.
    public func exec() async throws -> Document? {
        try await query.exec().first
    }

    /// Changes the document in one transaction; returns whether there was one.
    @discardableResult
    public func update(_ change: @escaping @Sendable (inout JSONValue) throws -> Void) async throws -> Bool {
        try await !query.update(change).isEmpty
    }

    /// Removes the document; returns whether there was one.
    @discardableResult
    public func remove() async throws -> Bool {
        try await !query.remove().isEmpty
    }
}
