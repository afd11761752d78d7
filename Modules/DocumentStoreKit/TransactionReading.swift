package import PersistenceKit

/// A write transaction that reads through a ``DocumentReader`` over its own state, once it has checked that it is
/// still open: the reading half of every store's transaction, written once.
package protocol TransactionReading: DocumentTransaction {
    associatedtype Reader: DocumentReader

    /// The reader over the transaction's state.
    ///
    /// - Throws: `PersistenceError.Kind.closed` once the transaction has ended.
    var openReader: Reader { get throws }
}

extension TransactionReading {
    /// The document, as the transaction sees it.
    package func document(id: String, in collection: String) throws -> StoredDocument? {
        try openReader.document(id: id, in: collection)
    }

    /// The documents matching `query`, as the transaction sees them.
    package func documents(matching query: DocumentQuery) throws -> [StoredDocument] {
        try openReader.documents(matching: query)
    }

    /// The number of documents matching `query`'s predicate, as the transaction sees them.
    package func count(matching query: DocumentQuery) throws -> Int {
        try openReader.count(matching: query)
    }

    /// The collections holding documents, as the transaction sees them.
    package func collectionNames() throws -> [String] {
        try openReader.collectionNames()
    }

    /// The last commit before the transaction.
    package func commitNumber() throws -> UInt64 {
        try openReader.commitNumber()
    }

    /// The error for a transaction used after its closure returned.
    package static func ended(file: String? = nil) -> PersistenceError {
        PersistenceError(.closed, "the transaction has ended: use it only inside its write closure", file: file)
    }
}
