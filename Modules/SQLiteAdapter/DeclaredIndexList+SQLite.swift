import DocumentStoreKit
import Foundation
import GRDB

/// The indexes declared on a store's file, kept in `tether_indexes` and known in memory (`DeclaredIndexList`), so
/// that the query compiler writes the paths they cover into its SQL (`SQLiteQueryCompiler.indexed`).
///
/// Each is an expression index on `tether_documents(collection, json_extract(body, '$."a"'), …)`: the collection
/// first, as every query names it, then the fields in the declared order.
extension DeclaredIndexList {
    /// Adds the indexes recorded in the file.
    func load(from db: Database) throws {
        for row in try Row.fetchAll(db, sql: "SELECT collection, fields FROM tether_indexes ORDER BY rowid") {
            add(recordedCollection: row[0], fields: row[1])
        }
    }

    /// Builds `index` and records it in the file.
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
            arguments: [name(of: index), index.collection, recordedFields(of: index)])
    }

    static func name(of index: DocumentIndex) -> String {
        "tether_idx_" + ([index.collection] + index.fields.map(\.description)).joined(separator: "__")
    }
}
