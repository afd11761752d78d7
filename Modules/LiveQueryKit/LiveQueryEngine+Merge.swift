import DocumentStoreKit

/// Putting changed documents into a result in the query's order.
extension LiveQueryEngine {
    /// The result with each changed document taken out and, if it matches now, put back in its place; nil when
    /// that cannot be exact.
    ///
    /// Unchanged documents outside a result are either not matching or — only when the result filled its limit —
    /// sorted after its last document. So the merged list is exact up to that old last document: if at least
    /// `limit` documents sort no later than it, they are the new window; otherwise the query must refill it.
    static func merge(
        _ changed: Dictionary<String, ChangeSet.Kind>.Keys, _ current: [String: StoredDocument],
        into result: [Document],
        query: DocumentQuery
    ) -> [Document]? {
        let changedIDs = Set(changed)
        var merged = result.filter { !changedIDs.contains($0.id) }
        for id in changed {
            guard let stored = current[id], query.predicate.matches(stored.body) else { continue }
            merged.insert(Document(stored), at: insertionIndex(of: stored, in: merged, query: query))
        }
        guard let limit = query.limit else { return merged }
        guard limit > 0 else { return [] }
        guard result.count >= limit, let last = result.last else { return Array(merged.prefix(limit)) }
        let boundary = StoredDocument(validatedID: last.id, body: last.value)
        let known = merged.prefix {
            !query.areInIncreasingOrder(boundary, StoredDocument(validatedID: $0.id, body: $0.value))
        }
        return known.count >= limit ? Array(merged.prefix(limit)) : nil
    }

    /// Where `document` goes in `documents`, sorted by the query's order (ties by `_id`, a total order).
    static func insertionIndex(of document: StoredDocument, in documents: [Document], query: DocumentQuery) -> Int {
        var low = 0
        var high = documents.count
        while low < high {
            let middle = (low + high) / 2
            let other = StoredDocument(validatedID: documents[middle].id, body: documents[middle].value)
            if query.areInIncreasingOrder(other, document) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
