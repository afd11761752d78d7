import DocumentStoreKit
import PersistenceKit
import PostgresNIO
import TetherJSON

/// A write transaction over one session, used only inside its `write` closure.
///
/// PostgreSQL aborts a whole transaction at the first failed statement, while Tether's transactions go on after an
/// error the caller catches (a duplicate `_id`, a document PostgreSQL cannot hold). So no statement is sent that
/// could fail on the caller's input: duplicates are found with `ON CONFLICT DO NOTHING`, and documents are checked
/// here first.
final class PostgresTransaction: TransactionReading {
    let reader: PostgresReader
    /// What the transaction changed, for its change-log entry.
    private(set) var changes: [ChangeSet.Key: ChangeSet.Kind] = [:]
    private var documents: [ChangeSet.Key: StoredDocument] = [:]
    private var isFinished = false
    /// The last collection name validated: a batch into one collection checks it once.
    private var validatedCollection: String?

    init(reader: PostgresReader) {
        self.reader = reader
    }

    func finish() {
        isFinished = true
    }

    var openReader: PostgresReader {
        get throws {
            guard !isFinished else { throw Self.ended(file: reader.session.store) }
            return reader
        }
    }

    private var schema: PostgresSchema { reader.schema }
    private var session: PostgresSession { reader.session }

    /// The entry for the commit numbered `commit`: what changed, and the documents as this transaction left them.
    func entry(commit: UInt64) -> ChangeLogEntry {
        let documents = changes.count <= ChangeSet.documentLimit ? documents.filter { changes[$0.key] != nil } : nil
        return ChangeLogEntry(commit: commit, changes: changes, documents: documents)
    }

    private func record(_ kind: ChangeSet.Kind, _ key: ChangeSet.Key, document: StoredDocument?) {
        changes[key] = ChangeSet.Kind.merging(changes[key], then: kind)
        documents[key] = document
    }

    private func prepare(_ document: JSONValue, into collection: String) throws -> StoredDocument {
        guard !isFinished else { throw Self.ended(file: session.store) }
        if collection != validatedCollection {
            try CollectionName.validate(collection)
            validatedCollection = collection
        }
        let stored = try StoredDocument(document, collection: collection)
        if let path = Self.pathOfNUL(in: stored.body) {
            throw PersistenceError(
                .invalidDocument,
                "PostgreSQL cannot store the character U+0000, found at \(path); store it escaped or as base64",
                collection: collection, id: stored.id)
        }
        return stored
    }

    func upsert(_ document: JSONValue, into collection: String) throws -> ChangeSet.Kind? {
        let stored = try prepare(document, into: collection)
        var binds = PostgresBindings()
        binds.append(collection)
        binds.append(stored.id)
        binds.append(stored.body.jsonText)
        // One statement: insert, or update only when the body differs; no row back when nothing changed. A new row
        // has no deleting transaction (xmax 0); an updated one has this one.
        let rows = try session.run(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(schema.documents) AS d (collection, id, body) VALUES ($1, $2, $3::jsonb)
                    ON CONFLICT (collection, id) DO UPDATE SET body = excluded.body
                    WHERE d.body IS DISTINCT FROM excluded.body
                    RETURNING (xmax = 0)
                    """, binds: binds), collection: collection, id: stored.id)
        guard let row = rows.first(where: { _ in true }) else { return nil }
        let kind: ChangeSet.Kind = try reader.decode(row, Bool.self) ? .inserted : .updated
        record(kind, ChangeSet.Key(collection: collection, id: stored.id), document: stored)
        return kind
    }

    func insert(_ document: JSONValue, into collection: String) throws {
        let stored = try prepare(document, into: collection)
        var binds = PostgresBindings()
        binds.append(collection)
        binds.append(stored.id)
        binds.append(stored.body.jsonText)
        let rows = try session.run(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(schema.documents) (collection, id, body) VALUES ($1, $2, $3::jsonb)
                    ON CONFLICT (collection, id) DO NOTHING RETURNING 1
                    """, binds: binds), collection: collection, id: stored.id)
        guard rows.contains(where: { _ in true }) else {
            throw PersistenceError(
                .duplicateID, "a document with _id \"\(stored.id)\" is already in \"\(collection)\"",
                collection: collection, id: stored.id)
        }
        record(.inserted, ChangeSet.Key(collection: collection, id: stored.id), document: stored)
    }

    func remove(id: String, from collection: String) throws -> Bool {
        guard !isFinished else { throw Self.ended(file: session.store) }
        try CollectionName.validate(collection)
        var binds = PostgresBindings()
        binds.append(collection)
        binds.append(id)
        let rows = try session.run(
            PostgresQuery(
                unsafeSQL: "DELETE FROM \(schema.documents) WHERE collection = $1 AND id = $2 RETURNING 1",
                binds: binds), collection: collection, id: id)
        guard rows.contains(where: { _ in true }) else { return false }
        record(.removed, ChangeSet.Key(collection: collection, id: id), document: nil)
        return true
    }

    /// Where `value` holds U+0000 (in a key or a string), which PostgreSQL's text and `jsonb` refuse; nil if nowhere.
    static func pathOfNUL(in value: JSONValue, at path: String = "") -> String? {
        switch value {
        case .string(let string):
            return string.utf8.contains(0) ? (path.isEmpty ? "the top" : path) : nil
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let found = pathOfNUL(in: element, at: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let members):
            for (key, member) in members {
                let child = path.isEmpty ? key : "\(path).\(key)"
                if key.utf8.contains(0) { return "the key of \(child.debugDescription)" }
                if let found = pathOfNUL(in: member, at: child) { return found }
            }
            return nil
        default:
            return nil
        }
    }
}
