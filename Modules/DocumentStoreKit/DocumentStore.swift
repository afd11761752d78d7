import PersistenceKit
public import TetherJSON

/// Named collections of JSON documents, each with a string `_id`: the storage under LiveQueryKit's live queries.
///
/// Writes happen in transactions that commit or roll back as a whole; after each commit that changed something,
/// ``changes`` tells every subscriber what changed. Implementations: ``InMemoryDocumentStore`` here,
/// `SQLiteDocumentStore` in SQLiteAdapter. `TetherTesting`'s `DocumentStoreConformance` checks a store against
/// the rules.
///
/// ```swift
/// let store = try SQLiteDocumentStore(path: "app.sqlite")
/// try await store.write { transaction in
///     try transaction.upsert(["_id": "a1", "store_id": "abc123", "name": "Pear"], into: "items")
///     try transaction.remove(id: "a0", from: "items")
/// }
/// let pear = try await store.document(id: "a1", in: "items")
/// ```
public protocol DocumentStore: Sendable {
    /// Runs `body` in a write transaction: it commits when `body` returns, and rolls back — changing nothing and
    /// publishing nothing — when `body` throws. Writes are serialized; readers are never blocked by them.
    ///
    /// - Throws: What `body` threw, or a `PersistenceError` when the commit fails.
    func write<T: Sendable>(_ body: @escaping @Sendable (any DocumentTransaction) throws -> T) async throws -> T

    /// Runs `body` with a consistent view of the store (no commit is seen half-applied).
    func read<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader) throws -> T) async throws -> T

    /// The change feed.
    var changes: ChangeFeed { get }

    /// Declares `index`, and builds it: queries filtering on its fields then read only the documents it leads them
    /// to. Declaring an index again does nothing. Readers are not blocked while it is built; writers wait.
    ///
    /// - Throws: `PersistenceError` (a storage failure).
    func createIndex(_ index: DocumentIndex) async throws

    /// The indexes declared, in the order they were first declared.
    func declaredIndexes() async throws -> [DocumentIndex]
}

/// Reading inside a transaction or a read.
public protocol DocumentReader {
    /// The document with `_id` `id` in `collection`, or nil.
    ///
    /// - Throws: `PersistenceError` (an invalid collection name, a storage failure).
    func document(id: String, in collection: String) throws -> StoredDocument?

    /// The documents matching `query`, in its order.
    ///
    /// - Throws: `PersistenceError` (an invalid collection name, a storage failure).
    func documents(matching query: DocumentQuery) throws -> [StoredDocument]

    /// The number of documents matching `query`'s predicate (ignoring its order and slice).
    func count(matching query: DocumentQuery) throws -> Int

    /// The names of the collections that hold at least one document, sorted.
    func collectionNames() throws -> [String]

    /// The number of the last commit this read sees (0 before any): the number its ``ChangeSet`` carries. Inside a
    /// write transaction, the last commit before it.
    func commitNumber() throws -> UInt64
}

/// Writing inside ``DocumentStore/write(_:)``. Every change is part of the transaction: none is seen by readers or
/// published before the commit.
public protocol DocumentTransaction: DocumentReader {
    /// Inserts the document, or replaces the one with the same `_id`.
    ///
    /// - Returns: `.inserted`, `.updated`, or nil when an identical document was already there (nothing changes,
    ///   nothing is published).
    /// - Throws: `PersistenceError` (`PersistenceError.Kind.invalidDocument`, an invalid collection name, a
    ///   storage failure).
    @discardableResult
    func upsert(_ document: JSONValue, into collection: String) throws -> ChangeSet.Kind?

    /// Inserts the document.
    ///
    /// - Throws: `PersistenceError.Kind.duplicateID` when the collection already has one with its `_id`, and
    ///   the other errors of ``upsert(_:into:)``. The transaction goes on: the caller may catch and continue.
    func insert(_ document: JSONValue, into collection: String) throws

    /// Removes the document with `_id` `id`; returns whether there was one.
    @discardableResult
    func remove(id: String, from collection: String) throws -> Bool
}

extension DocumentTransaction {
    /// Parses `json` and upserts it (see ``upsert(_:into:)``).
    ///
    /// - Throws: `PersistenceError.Kind.invalidJSON` with the line and column, and the errors of `upsert`.
    @discardableResult
    public func upsert(json: String, into collection: String) throws -> ChangeSet.Kind? {
        try upsert(StoredDocument(json: json, collection: collection).body, into: collection)
    }

    /// Removes every document matching `query`; returns their `_id`s.
    @discardableResult
    public func removeAll(matching query: DocumentQuery) throws -> [String] {
        let ids = try documents(matching: query).map(\.id)
        for id in ids { try remove(id: id, from: query.collection) }
        return ids
    }
}

extension DocumentStore {
    /// Upserts one document in a transaction of its own (see ``DocumentTransaction/upsert(_:into:)``).
    @discardableResult
    public func upsert(_ document: JSONValue, into collection: String) async throws -> ChangeSet.Kind? {
        try await write { try $0.upsert(document, into: collection) }
    }

    /// Inserts one document in a transaction of its own (see ``DocumentTransaction/insert(_:into:)``).
    public func insert(_ document: JSONValue, into collection: String) async throws {
        try await write { try $0.insert(document, into: collection) }
    }

    /// Removes one document in a transaction of its own; returns whether there was one.
    @discardableResult
    public func remove(id: String, from collection: String) async throws -> Bool {
        try await write { try $0.remove(id: id, from: collection) }
    }

    /// The document with `_id` `id` in `collection`, or nil.
    public func document(id: String, in collection: String) async throws -> StoredDocument? {
        try await read { try $0.document(id: id, in: collection) }
    }

    /// The documents matching `query`, in its order.
    public func documents(matching query: DocumentQuery) async throws -> [StoredDocument] {
        try await read { try $0.documents(matching: query) }
    }
}
