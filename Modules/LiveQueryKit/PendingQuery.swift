import Dispatch
public import DocumentStoreKit
import PersistenceKit
public import TetherJSON

/// A query on a collection, to refine (``sort(_:direction:)``, ``limit(_:)``, ``offset(_:)``), run once
/// (``exec()``), change (``update(_:)``, ``remove()``) or observe (`observeLocal…`, ``snapshots()``).
public struct PendingQuery: Sendable {
    let collection: StoreCollection
    /// The query text.
    public let text: String
    let predicate: @Sendable () throws -> DocumentPredicate
    /// A `find`'s arguments, which with its text make its predicate: its compiled query is kept by them
    /// (``compiledCache``). Nil for a query whose predicate comes from elsewhere.
    let args: [String: JSONValue]?
    var sortKeys: [SortKey] = []
    var limitCount: Int?
    var offsetCount = 0

    init(collection: StoreCollection, text: String, predicate: @escaping @Sendable () throws -> DocumentPredicate) {
        self.collection = collection
        self.text = text
        self.predicate = predicate
        self.args = nil
    }

    /// A `find`: the query language's `text`, with `args`.
    init(collection: StoreCollection, text: String, args: [String: JSONValue]) {
        self.collection = collection
        self.text = text
        self.predicate = { try QueryParser.predicate(text, args: args) }
        self.args = args
    }

    /// Sorts by the field at `path` (dotted), after any earlier sort keys. Missing and null sort first, then
    /// Booleans, numbers, strings (by UTF-8 bytes); ties are broken by `_id`.
    public func sort(_ path: String, direction: DocumentSort.Direction = .ascending) -> PendingQuery {
        var copy = self
        copy.sortKeys.append(SortKey(path: path, direction: direction))
        return copy
    }

    /// At most `count` documents.
    public func limit(_ count: Int) -> PendingQuery {
        var copy = self
        copy.limitCount = count
        return copy
    }

    /// Skips the first `count` documents.
    public func offset(_ count: Int) -> PendingQuery {
        var copy = self
        copy.offsetCount = count
        return copy
    }

    /// The compiled query.
    ///
    /// - Throws: ``QueryError`` for the text, a sort path, a limit or an offset; `PersistenceError` for the
    ///   collection name.
    public func compiled() throws -> DocumentQuery {
        guard let args else { return try compile() }
        let key = CompiledKey(
            collection: collection.name, text: ExactText(text),
            args: Dictionary(uniqueKeysWithValues: args.map { (ExactText($0.key), ExactText($0.value.jsonText)) }),
            sort: sortKeys, limit: limitCount, offset: offsetCount)
        return try Self.compiledCache.value(for: key) { try compile() }
    }

    /// Compiles the query now.
    private func compile() throws -> DocumentQuery {
        let predicate = try predicate()
        var sort: [DocumentSort] = []
        for key in sortKeys {
            do {
                sort.append(DocumentSort(try DocumentPath(key.path), key.direction))
            } catch {
                throw QueryError("'\(key.path)' is not a sort field path: \(error.message)", query: text, column: nil)
            }
        }
        if let limitCount, limitCount < 0 {
            throw QueryError("limit must be 0 or more, not \(limitCount)", query: text, column: nil)
        }
        guard offsetCount >= 0 else {
            throw QueryError("offset must be 0 or more, not \(offsetCount)", query: text, column: nil)
        }
        return try DocumentQuery(
            collection: collection.name, predicate: predicate, sort: sort, limit: limitCount, offset: offsetCount)
    }

    /// The matching documents now.
    public func exec() async throws -> [Document] {
        try await collection.store.documents.documents(matching: compiled()).map(Document.init)
    }

    /// Changes every matching document in one transaction; returns the `_id`s of those that changed. The change
    /// may not alter `_id`.
    @discardableResult
    public func update(_ change: @escaping @Sendable (inout JSONValue) throws -> Void) async throws -> [String] {
        let query = try compiled()
        return try await collection.store.transaction { transaction in
            var changed: [String] = []
            for document in try transaction.documents(matching: query) {
                var value = document.body
                try change(&value)
                guard value["_id"] == .string(document.id) else {
                    throw PersistenceError(
                        .invalidDocument, "an update may not change or remove _id", collection: query.collection,
                        id: document.id)
                }
                if try transaction.upsert(value, into: query.collection) != nil { changed.append(document.id) }
            }
            return changed
        }
    }

    /// Removes every matching document in one transaction; returns their `_id`s.
    @discardableResult
    public func remove() async throws -> [String] {
        let query = try compiled()
        return try await collection.store.transaction { try $0.removeAll(matching: query) }
    }
}

extension PendingQuery {
    /// The compiled queries of up to 256 `find`s, for the process, by everything that makes one (``CompiledKey``):
    /// observers of the same query share one, and compile it once.
    static let compiledCache = BoundedCache<CompiledKey, DocumentQuery>(capacity: 256)

    /// One sort key, as given.
    struct SortKey: Hashable, Sendable {
        let path: String
        let direction: DocumentSort.Direction
    }

    /// Everything a `find`'s compiled query is made from; the text and the arguments (as JSON text) byte for byte.
    struct CompiledKey: Hashable, Sendable {
        let collection: String
        let text: ExactText
        let args: [ExactText: ExactText]
        let sort: [SortKey]
        let limit: Int?
        let offset: Int
    }
}
