public import DocumentStoreKit
public import Logging
import TetherClock
import TetherConcurrency
public import TetherJSON

/// Collections of documents you write and observe: Ditto's local store, over any `DocumentStore`.
///
/// ```swift
/// let store = Store(try SQLiteDocumentStore(path: "app.sqlite"))     // or Store.inMemory()
/// let items = store.collection("items")
/// try await items.upsert(["_id": "a1", "store_id": "abc123", "name": "Pear"])
/// let liveQuery = try items.find("store_id == $args.sid", args: ["sid": "abc123"])
///     .sort("name")
///     .observeLocal { documents, event in render(documents) }
/// ```
///
/// After each commit, only the queries the changes can affect are run again; identical queries run once for all
/// their observers; every observer gets results at its own pace (see ``PendingQuery``'s observe methods).
public final class Store: Sendable {
    /// The storage.
    public let documents: any DocumentStore
    let engine: LiveQueryEngine

    /// Makes a store over `documents` (a `SQLiteDocumentStore` for a file; see ``inMemory(configuration:logger:)``),
    /// its live queries tuned by `configuration` (the defaults suit most applications).
    public init(
        _ documents: any DocumentStore, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "tether.livequery")
    ) {
        self.documents = documents
        self.engine = LiveQueryEngine(documents: documents, configuration: configuration, logger: logger)
        LifetimeTracking.made(self, "store")
    }

    /// A store in memory, with the same semantics as one on a file.
    public static func inMemory(
        configuration: Configuration = Configuration(), logger: Logger = Logger(label: "tether.livequery")
    ) -> Store {
        Store(InMemoryDocumentStore(), configuration: configuration, logger: logger)
    }

    /// The collection named `name` (1–100 letters, digits, `_`, `-`, `.`; checked when it is used).
    public func collection(_ name: String) -> StoreCollection {
        StoreCollection(name: name, store: self)
    }

    /// Runs `body` in one write transaction: every change commits at once, or none when `body` throws.
    ///
    /// ```swift
    /// try await store.write { transaction in
    ///     try transaction.collection("orders").upsert(["_id": "o1", "item": "a1"])
    ///     try transaction.collection("items").remove(id: "a1")
    /// }
    /// ```
    public func write<T: Sendable>(_ body: @escaping @Sendable (WriteTransaction) throws -> T) async throws -> T {
        try await transaction { try body(WriteTransaction($0)) }
    }

    /// Runs `body` in one write transaction of the document store, counted as a write in flight
    /// (``WritesInFlight``): every write the store makes goes through here.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any DocumentTransaction) throws -> T) async throws -> T {
        try await engine.writes.counting { try await documents.write(body) }
    }

    /// The number of the last commit the store has published (0 before the first). Once a write has returned, it is
    /// that write's commit or a later one.
    public var lastCommit: UInt64 {
        documents.changes.lastCommit
    }

    /// Returns once the live queries have caught up with `commit` (by default ``lastCommit`` now): every observed
    /// query's result is exact at that commit or a later one and has been offered to its observers — delivered,
    /// waiting for the observer's handler or `signalNext`, or found the same as what the observer already has
    /// (``LiveQuery/deliveredCommit`` then moves on without a call) — and every observer added before this call has
    /// been offered its first result. A query whose every observer is still busy with an earlier result, its
    /// changes held back (``LiveQueryStatistics/deferrals``), is brought up to date for this call; its observers
    /// take the result when they signal.
    ///
    /// Offered is not yet handled: a handler runs on its own queue. To wait for what an observer receives, iterate
    /// ``PendingQuery/snapshots()``, whose `next()` returns the next result.
    ///
    /// Returns at once when nothing is observed, and when the store is closed or the calling task is cancelled.
    ///
    /// ```swift
    /// try await items.upsert(["_id": "a1", "name": "Pear"])
    /// await store.waitForLiveQueries()   // every observer of "items" has been offered a result with the pear
    /// ```
    public func waitForLiveQueries(through commit: UInt64? = nil) async {
        await engine.waitUntilCaughtUp(with: commit ?? lastCommit)
    }

    /// How much work the live queries have cost so far.
    public var statistics: LiveQueryStatistics {
        engine.statistics
    }
}

/// Writing to several collections at once, inside ``Store/write(_:)``.
public struct WriteTransaction {
    let transaction: any DocumentTransaction

    init(_ transaction: any DocumentTransaction) {
        self.transaction = transaction
    }

    /// The collection named `name`, inside this transaction.
    public func collection(_ name: String) -> TransactionCollection {
        TransactionCollection(name: name, transaction: transaction)
    }
}

/// One collection inside a write transaction.
public struct TransactionCollection {
    /// The collection's name.
    public let name: String
    let transaction: any DocumentTransaction

    /// Inserts or replaces the document; one without `_id` gets a new UUID. Returns the `_id`.
    @discardableResult
    public func upsert(_ document: JSONValue) throws -> String {
        let document = try DocumentID.ensuring(document, collection: name)
        try transaction.upsert(document.value, into: name)
        return document.id
    }

    /// Inserts the document (one without `_id` gets a new UUID); fails with `duplicateID` if its `_id` exists.
    @discardableResult
    public func insert(_ document: JSONValue) throws -> String {
        let document = try DocumentID.ensuring(document, collection: name)
        try transaction.insert(document.value, into: name)
        return document.id
    }

    /// Removes the document with `_id` `id`; returns whether there was one.
    @discardableResult
    public func remove(id: String) throws -> Bool {
        try transaction.remove(id: id, from: name)
    }

    /// The document with `_id` `id`, as the transaction sees it.
    public func findByID(_ id: String) throws -> Document? {
        try transaction.document(id: id, in: name).map(Document.init)
    }

    /// Every document of the collection, as the transaction sees them.
    public func findAll() throws -> [Document] {
        try transaction.documents(matching: DocumentQuery(collection: name, predicate: .all)).map(Document.init)
    }

    /// The documents matching `query`, as the transaction sees them.
    public func find(_ query: String, args: [String: JSONValue] = [:]) throws -> [Document] {
        let compiled = try DocumentQuery(collection: name, predicate: QueryParser.predicate(query, args: args))
        return try transaction.documents(matching: compiled).map(Document.init)
    }

    /// The `_id` and canonical JSON text (`JSONValue.jsonText`) of the documents matching `query` (all of them when
    /// nil), as the transaction sees them: for comparing documents with the stored ones without parsing those.
    package func canonicalTexts(matching query: String?) throws -> [(id: String, text: String)] {
        let predicate = try query.map { try QueryParser.predicate($0, args: [:]) } ?? .all
        return try transaction.canonicalTexts(matching: DocumentQuery(collection: name, predicate: predicate))
    }
}
