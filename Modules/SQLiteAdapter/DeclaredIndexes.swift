import DocumentStoreKit
import Foundation
import GRDB
import TetherConcurrency

/// The indexes declared on a store's file, kept in `tether_indexes` and known in memory, so that the query compiler
/// writes the paths they cover into its SQL (`SQLiteQueryCompiler.indexed`).
///
/// Each is an expression index on `tether_documents(collection, json_extract(body, '$."a"'), …)`: the collection
/// first, as every query names it, then the fields in the declared order.
final class DeclaredIndexes: Sendable {
    private let state = LockedValue<(list: [DocumentIndex], paths: [String: Set<DocumentPath>])>(([], [:]))

    /// The declared indexes, in order.
    var list: [DocumentIndex] {
        state.withLock { $0.list }
    }

    /// The paths of `collection` some declared index covers.
    func paths(in collection: String) -> Set<DocumentPath> {
        state.withLock { $0.paths[collection] ?? [] }
    }

    /// Remembers `index`.
    func add(_ index: DocumentIndex) {
        state.withLock { state in
            guard !state.list.contains(index) else { return }
            state.list.append(index)
            state.paths[index.collection, default: []].formUnion(index.fields)
        }
    }

    /// Reads the declarations stored in the file (another process's included, as of now).
    func load(from db: Database) throws {
        for row in try Row.fetchAll(db, sql: "SELECT collection, fields FROM tether_indexes ORDER BY rowid") {
            let collection: String = row[0]
            let fields: String = row[1]
            // Written by `create`: dotted paths separated by commas; a row that no longer parses is skipped.
            let paths = fields.split(separator: ",").map(String.init)
            if let index = try? DocumentIndex(collection: collection, fields: paths) { add(index) }
        }
    }

    /// Builds `index` in the file and records it, in the caller's write transaction.
    static func create(_ index: DocumentIndex, in db: Database) throws {
        let columns = ["collection"] + index.fields.map(SQLiteQueryCompiler.indexedValue)
        // The name and the expressions are built from the collection name and the paths, which their validation
        // limits to letters, digits, '_', '-' and '.': no quote can reach the SQL.
        try db.execute(
            sql:
                "CREATE INDEX IF NOT EXISTS \"\(name(of: index))\" ON tether_documents(\(columns.joined(separator: ", ")))"
        )
        // Statistics, so that the planner prefers the new index to the (collection, id) one wherever it narrows
        // more: without them the two look alike to it, and a one-field index went unused.
        try db.execute(sql: "ANALYZE tether_documents")
        try db.execute(
            sql: "INSERT OR IGNORE INTO tether_indexes (name, collection, fields) VALUES (?, ?, ?)",
            arguments: [
                name(of: index), index.collection, index.fields.map(\.description).joined(separator: ","),
            ])
    }

    /// `tether_idx_items__store_id__name`.
    static func name(of index: DocumentIndex) -> String {
        "tether_idx_" + ([index.collection] + index.fields.map(\.description)).joined(separator: "__")
    }
}
