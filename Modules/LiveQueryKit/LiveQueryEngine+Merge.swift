import DocumentStoreKit

/// Putting changed documents into a result in the query's order.
extension LiveQueryEngine {
    /// The result with each changed document taken out and, if it matches now, put back in its place; nil when
    /// that cannot be exact.
    ///
    /// Unchanged documents outside a result are either not matching or — only when the result filled its limit —
    /// sorted after its last document. So the merged list is exact up to that old last document: if at least
    /// `limit` documents sort no later than it, they are the new window; otherwise the query must refill it.
    static func merge(_ changed: ChangedDocuments.Changed, into result: [Document], query: DocumentQuery) -> [Document]?
    {
        var merged = OrderedDocuments(result.filter { !changed.ids.contains($0.id) }, query: query)
        for document in changed.found.values where query.predicate.matches(document.body) { merged.insert(document) }
        guard let limit = query.limit else { return merged.documents }
        guard limit > 0 else { return [] }
        guard result.count >= limit, let last = result.last else { return Array(merged.documents.prefix(limit)) }
        // How many sort no later than the old last document (the merged list is sorted: a binary search).
        let known = merged.insertionIndex(of: OrderedDocuments.key(of: last, in: query), after: true)
        return known >= limit ? Array(merged.documents.prefix(limit)) : nil
    }
}

/// Documents in a query's order, into which others are inserted by binary search. Each document's sort fields are
/// read the first time a search meets it, then kept: a round that merges many changed documents into a result
/// reads each of its documents' fields at most once, and one that merges a single document only those its search
/// meets.
struct OrderedDocuments {
    let query: DocumentQuery
    private(set) var documents: [Document]
    /// ``documents``' order keys, each read when first needed.
    private var keys: [DocumentQuery.OrderKey?]

    init(_ documents: [Document], query: DocumentQuery) {
        self.query = query
        self.documents = documents
        self.keys = Array(repeating: nil, count: documents.count)
    }

    /// Inserts `document` in its place.
    mutating func insert(_ document: StoredDocument) {
        let key = query.orderKey(of: document)
        let index = insertionIndex(of: key)
        documents.insert(Document(document), at: index)
        keys.insert(key, at: index)
    }

    /// Where a document with `key` goes: before any document equal to it, or — `after` — past them.
    mutating func insertionIndex(of key: DocumentQuery.OrderKey, after: Bool = false) -> Int {
        var low = 0
        var high = documents.count
        while low < high {
            let middle = (low + high) / 2
            let other = self.key(at: middle)
            let goesLater = after ? !query.areInIncreasingOrder(key, other) : query.areInIncreasingOrder(other, key)
            if goesLater { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private mutating func key(at index: Int) -> DocumentQuery.OrderKey {
        if let key = keys[index] { return key }
        let key = Self.key(of: documents[index], in: query)
        keys[index] = key
        return key
    }

    /// A result's document's place in `query`'s order.
    static func key(of document: Document, in query: DocumentQuery) -> DocumentQuery.OrderKey {
        query.orderKey(of: StoredDocument(validatedID: document.id, body: document.value))
    }
}
