import Dispatch
import PersistenceKit
import TetherConcurrency
import TetherJSON

/// A ``DocumentStore`` in memory, with the same semantics as the SQLite one: for tests, and for apps that want live
/// queries without a file. Writes run one at a time on a queue of their own, each on a copy of the data that
/// replaces it at commit; reads see the last commit.
public final class InMemoryDocumentStore: DocumentStore {
    /// Collection name → `_id` → document.
    typealias Contents = [String: [String: JSONValue]]

    /// The documents and the number of the last commit, replaced together at each commit.
    let contents = LockedValue<(documents: Contents, commit: UInt64)>(([:], 0))
    let writer = DispatchQueue(label: "tether.persistence.in-memory-store.writer")
    /// The change feed.
    public let changes = ChangeFeed()
    private let indexes = LockedValue<[DocumentIndex]>([])

    /// Makes an empty store.
    public init() {
        LifetimeTracking.made(self, "in-memory document store")
    }

    /// Runs `body` on a copy of the data; the copy replaces the data if `body` returns.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any DocumentTransaction) throws -> T) async throws -> T
    {
        return try await withCheckedThrowingContinuation { continuation in
            writer.async { [self] in
                let (documents, commit) = contents.withLock { $0 }
                let transaction = InMemoryTransaction(contents: documents, commit: commit)
                let result = Result { try body(transaction) }
                if case .success = result {
                    let committed = transaction.finish()
                    if !committed.changes.isEmpty {
                        contents.withLock { $0 = (committed.contents, commit + 1) }
                        changes.publish(committed.changes, commit: commit + 1, documents: committed.documents)
                    }
                } else {
                    _ = transaction.finish()
                }
                continuation.resume(with: result)
            }
        }
    }

    /// Runs `body` on the last committed data.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader) throws -> T) async throws -> T {
        let (documents, commit) = contents.withLock { $0 }
        return try body(InMemoryReader(contents: documents, commit: commit))
    }

    /// Records `index` (once). The store scans its documents in memory: the declaration changes no result and no
    /// speed here, and is kept so that code written for the SQLite and PostgreSQL stores runs unchanged.
    public func createIndex(_ index: DocumentIndex) async throws {
        indexes.withLock { indexes in
            if !indexes.contains(index) { indexes.append(index) }
        }
    }

    /// The indexes declared, in order.
    public func declaredIndexes() async throws -> [DocumentIndex] {
        indexes.withLock { $0 }
    }
}

/// Reads over a copy of the contents.
struct InMemoryReader: DocumentReader {
    let contents: InMemoryDocumentStore.Contents
    let commit: UInt64

    func commitNumber() throws -> UInt64 { commit }

    func document(id: String, in collection: String) throws -> StoredDocument? {
        try CollectionName.validate(collection)
        return contents[collection]?[id].map { StoredDocument(validatedID: id, body: $0) }
    }

    func documents(matching query: DocumentQuery) throws -> [StoredDocument] {
        try query.checkRunnable()
        let all = (contents[query.collection] ?? [:]).lazy.map { StoredDocument(validatedID: $0.key, body: $0.value) }
        return query.apply(to: all)
    }

    func count(matching query: DocumentQuery) throws -> Int {
        try query.checkRunnable()
        return (contents[query.collection] ?? [:]).values.count { query.predicate.matches($0) }
    }

    func collectionNames() throws -> [String] {
        contents.filter { !$0.value.isEmpty }.keys.sorted { UTF8Order.compare($0, $1) < 0 }
    }
}

/// A write transaction over a private copy of the contents, used by one writer on the store's queue.
final class InMemoryTransaction: TransactionReading {
    private var contents: InMemoryDocumentStore.Contents
    private let commit: UInt64
    private var changes: [ChangeSet.Key: ChangeSet.Kind] = [:]
    private var isFinished = false

    init(contents: InMemoryDocumentStore.Contents, commit: UInt64) {
        self.contents = contents
        self.commit = commit
    }

    var openReader: InMemoryReader {
        get throws {
            try checkOpen()
            return InMemoryReader(contents: contents, commit: commit)
        }
    }

    func finish() -> (
        contents: InMemoryDocumentStore.Contents, changes: [ChangeSet.Key: ChangeSet.Kind],
        documents: [ChangeSet.Key: StoredDocument]?
    ) {
        isFinished = true
        return (contents, changes, changedDocuments)
    }

    /// The changed documents as the transaction leaves them, for the feed (none past ``ChangeSet/documentLimit``).
    private var changedDocuments: [ChangeSet.Key: StoredDocument]? {
        guard changes.count <= ChangeSet.documentLimit else { return nil }
        var documents: [ChangeSet.Key: StoredDocument] = [:]
        for key in changes.keys {
            if let body = contents[key.collection]?[key.id] {
                documents[key] = StoredDocument(validatedID: key.id, body: body)
            }
        }
        return documents
    }

    private func checkOpen() throws(PersistenceError) {
        guard !isFinished else { throw Self.ended() }
    }

    func upsert(_ document: JSONValue, into collection: String) throws -> ChangeSet.Kind? {
        try checkOpen()
        try CollectionName.validate(collection)
        let stored = try StoredDocument(document, collection: collection)
        let previous = contents[collection, default: [:]].updateValue(stored.body, forKey: stored.id)
        // Unchanged only when the stored text is, as in the SQL stores: `==` on values finds canonically equivalent
        // strings equal ("é" precomposed and decomposed), whose bytes — what a query orders by — differ.
        if let previous, previous == stored.body, previous.jsonBytes == stored.body.jsonBytes { return nil }
        let kind: ChangeSet.Kind = previous == nil ? .inserted : .updated
        record(kind, collection: collection, id: stored.id)
        return kind
    }

    func insert(_ document: JSONValue, into collection: String) throws {
        try checkOpen()
        try CollectionName.validate(collection)
        let stored = try StoredDocument(document, collection: collection)
        guard contents[collection]?[stored.id] == nil else {
            throw PersistenceError(
                .duplicateID, "a document with _id \"\(stored.id)\" is already in \"\(collection)\"",
                collection: collection, id: stored.id)
        }
        contents[collection, default: [:]][stored.id] = stored.body
        record(.inserted, collection: collection, id: stored.id)
    }

    func remove(id: String, from collection: String) throws -> Bool {
        try checkOpen()
        try CollectionName.validate(collection)
        guard contents[collection]?.removeValue(forKey: id) != nil else { return false }
        if contents[collection]?.isEmpty == true { contents[collection] = nil }
        record(.removed, collection: collection, id: id)
        return true
    }

    private func record(_ kind: ChangeSet.Kind, collection: String, id: String) {
        let key = ChangeSet.Key(collection: collection, id: id)
        changes[key] = ChangeSet.Kind.merging(changes[key], then: kind)
    }
}
