import DocumentStoreKit
import Foundation
import GRDB
import PersistenceKit
import TetherJSON

/// Reads over one GRDB connection, inside a read or a write.
struct SQLiteReader: DocumentReader, DocumentTextReading {
    let db: Database
    let file: String
    /// Told of each stored row that no longer reads as a document; the row is left out of query results.
    var unreadable: UnreadableRows?
    /// The declared indexes, whose paths the compiled queries write out.
    var indexes: DeclaredIndexList?

    func document(id: String, in collection: String) throws -> StoredDocument? {
        try CollectionName.validate(collection)
        return try guarding(collection: collection, id: id) {
            let statement = try db.cachedStatement(
                sql: "SELECT body FROM tether_documents WHERE collection = ? AND id = ?")
            // The cursor stays alive while the row is parsed: the row reads SQLite's buffer, which the cursor owns.
            let rows = try Row.fetchCursor(statement, arguments: [collection, id])
            return try withExtendedLifetime(rows) { () -> StoredDocument? in
                guard let row = try rows.next() else { return nil }
                return StoredDocument(validatedID: id, body: try Self.parse(row, at: 0, collection: collection, id: id))
            }
        }
    }

    func documents(matching query: DocumentQuery) throws -> [StoredDocument] {
        var documents: [StoredDocument] = []
        try forEachRow(matching: query) { row in
            let id: String = row[0]
            do {
                documents.append(
                    StoredDocument(
                        validatedID: id, body: try Self.parse(row, at: 1, collection: query.collection, id: id)))
            } catch let error as PersistenceError where unreadable != nil {
                // One bad row (written by another program, or by a version that allowed deeper documents) must
                // not make its collection unreadable: it is left out and reported; `document(id:)` still names it.
                unreadable?.found(error)
            }
        }
        return documents
    }

    func documentTexts(matching query: DocumentQuery) throws -> [(id: String, text: String)] {
        var texts: [(id: String, text: String)] = []
        try forEachRow(matching: query) { row in texts.append((row[0], row[1])) }
        return texts
    }

    /// Runs `query` and hands `body` each row: the `_id`, then the stored text.
    private func forEachRow(matching query: DocumentQuery, _ body: (Row) throws -> Void) throws {
        try query.checkRunnable()
        try guarding(collection: query.collection) {
            let indexed = indexes?.paths(in: query.collection) ?? []
            let (sql, arguments) = SQLiteQueryCompiler.select(query, indexed: indexed)
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
            while let row = try rows.next() { try body(row) }
        }
    }

    func count(matching query: DocumentQuery) throws -> Int {
        try query.checkRunnable()
        return try guarding(collection: query.collection) {
            let indexed = indexes?.paths(in: query.collection) ?? []
            let (sql, arguments) = SQLiteQueryCompiler.count(query, indexed: indexed)
            return try Int.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) ?? 0
        }
    }

    func collectionNames() throws -> [String] {
        try guarding {
            try String.fetchAll(db, sql: "SELECT DISTINCT collection FROM tether_documents ORDER BY collection")
        }
    }

    func commitNumber() throws -> UInt64 {
        try guarding {
            try UInt64.fetchOne(db.cachedStatement(sql: "SELECT value FROM tether_meta WHERE key = 'commit'")) ?? 0
        }
    }

    /// Runs `body`, turning database errors into persistence errors with context. Cancellation (GRDB stops the
    /// statements of a cancelled task) stays a `CancellationError`, as Swift code expects.
    func guarding<T>(collection: String? = nil, id: String? = nil, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let cancellation as CancellationError {
            throw cancellation
        } catch {
            throw PersistenceError.mapping(error, file: file, collection: collection, id: id)
        }
    }

    /// The document in column `index` of `row`, a row of a cursor: parsed from SQLite's own buffer, which holds
    /// the text until the cursor moves on, so that a document is in memory twice at most while it is read (SQLite's
    /// text and the parsed value), not three times.
    static func parse(_ row: Row, at index: Int, collection: String, id: String) throws -> JSONValue {
        do {
            return try row.withUnsafeData(atIndex: index) { data in try JSONValue(parsing: data ?? Data()) }
        } catch {
            throw PersistenceError(
                .corrupt, "the stored document is not valid JSON: \(error)", collection: collection, id: id,
                cause: error)
        }
    }
}

/// A write transaction over GRDB's writer connection, used only inside its `write` closure.
final class SQLiteTransaction: TransactionReading, DocumentTextReading {
    let reader: SQLiteReader
    let tracker: ChangeTracker
    private var isFinished = false
    /// The last collection name validated: a batch into one collection checks it once.
    private var validatedCollection: String?

    init(
        db: Database, file: String, tracker: ChangeTracker, unreadable: UnreadableRows? = nil,
        indexes: DeclaredIndexList? = nil
    ) {
        self.reader = SQLiteReader(db: db, file: file, unreadable: unreadable, indexes: indexes)
        self.tracker = tracker
    }

    func finish() {
        isFinished = true
    }

    var openReader: SQLiteReader {
        get throws {
            try checkOpen()
            return reader
        }
    }

    private func checkOpen() throws(PersistenceError) {
        guard !isFinished else { throw Self.ended(file: reader.file) }
    }

    private func validate(_ collection: String) throws(PersistenceError) {
        guard collection != validatedCollection else { return }
        try CollectionName.validate(collection)
        validatedCollection = collection
    }

    func upsert(_ document: JSONValue, into collection: String) throws -> ChangeSet.Kind? {
        try checkOpen()
        try validate(collection)
        let stored = try StoredDocument(document, collection: collection)
        let text = stored.body.jsonText
        let db = reader.db
        return try reader.guarding(collection: collection, id: stored.id) {
            // One statement: insert, or update only when the text differs. The row event says which happened.
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO tether_documents (collection, id, body) VALUES (?, ?, ?)
                    ON CONFLICT (collection, id) DO UPDATE SET body = excluded.body WHERE body IS NOT excluded.body
                    """)
            guard
                let event = try tracker.event(of: { try statement.execute(arguments: [collection, stored.id, text]) })
            else { return nil }
            let kind: ChangeSet.Kind = event.kind == .insert ? .inserted : .updated
            tracker.record(
                kind, ChangeSet.Key(collection: collection, id: stored.id), row: event.row, document: stored)
            return kind
        }
    }

    func insert(_ document: JSONValue, into collection: String) throws {
        try checkOpen()
        try validate(collection)
        let stored = try StoredDocument(document, collection: collection)
        let db = reader.db
        try reader.guarding(collection: collection, id: stored.id) {
            let exists =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM tether_documents WHERE collection = ? AND id = ?"),
                    arguments: [collection, stored.id]) ?? false
            guard !exists else {
                throw PersistenceError(
                    .duplicateID, "a document with _id \"\(stored.id)\" is already in \"\(collection)\"")
            }
            try db.cachedStatement(sql: "INSERT INTO tether_documents (collection, id, body) VALUES (?, ?, ?)")
                .execute(arguments: [collection, stored.id, stored.body.jsonText])
            tracker.record(
                .inserted, ChangeSet.Key(collection: collection, id: stored.id), row: db.lastInsertedRowID,
                document: stored)
        }
    }

    func documentTexts(matching query: DocumentQuery) throws -> [(id: String, text: String)] {
        try openReader.documentTexts(matching: query)
    }

    func remove(id: String, from collection: String) throws -> Bool {
        try checkOpen()
        try validate(collection)
        let db = reader.db
        return try reader.guarding(collection: collection, id: id) {
            guard
                let row = try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT rowid FROM tether_documents WHERE collection = ? AND id = ?"),
                    arguments: [collection, id])
            else { return false }
            try db.cachedStatement(sql: "DELETE FROM tether_documents WHERE rowid = ?").execute(arguments: [row])
            tracker.record(.removed, ChangeSet.Key(collection: collection, id: id), row: row, document: nil)
            return true
        }
    }
}
