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
        // How many sort no later than the old last document (the merged list is sorted: a binary search).
        let known = insertionIndex(
            of: StoredDocument(validatedID: last.id, body: last.value), in: merged, query: query, after: true)
        return known >= limit ? Array(merged.prefix(limit)) : nil
    }

    /// Where `document` goes in `documents`, sorted by the query's order (ties by `_id`, a total order): before
    /// any document equal to it, or — `after` — past them.
    static func insertionIndex(
        of document: StoredDocument, in documents: [Document], query: DocumentQuery, after: Bool = false
    ) -> Int {
        var low = 0
        var high = documents.count
        while low < high {
            let middle = (low + high) / 2
            let other = StoredDocument(validatedID: documents[middle].id, body: documents[middle].value)
            let goesLater =
                after ? !query.areInIncreasingOrder(document, other) : query.areInIncreasingOrder(other, document)
            if goesLater { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
