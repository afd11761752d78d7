import DocumentStoreKit
import PostgresNIO

/// The declared indexes in PostgreSQL: each an expression index on `tether_documents (collection, (body -> 'a'), …)`
/// — the collection first, as every query names it, then the fields' `jsonb` values in the declared order, which
/// serve the query compiler's equality, membership and number ranges on those paths — recorded in
/// `tether_indexes` so that every process using the schema knows them.
struct PostgresIndexes {
    let session: PostgresSession
    let schema: PostgresSchema

    /// Builds `index` (once, whoever asks first: under an advisory lock, since two `CREATE INDEX IF NOT EXISTS` at
    /// once can collide) and records it.
    func create(_ index: DocumentIndex) throws {
        let columns = ["collection"] + index.fields.map(PostgresQueryCompiler.indexedValue)
        let name = Self.name(of: index)
        try session.run("BEGIN")
        do {
            var lock = PostgresBindings()
            lock.append("tether:\(schema.schema)")
            try session.run(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext($1))", binds: lock))
            // The name is a hash, the expressions come from paths limited to letters, digits, '_' and '-': no quote
            // can reach the SQL.
            try session.run(
                PostgresQuery(
                    unsafeSQL:
                        "CREATE INDEX IF NOT EXISTS \(name) ON \(schema.documents) (\(columns.joined(separator: ", ")))"
                ), collection: index.collection)
            var binds = PostgresBindings()
            binds.append(name)
            binds.append(index.collection)
            binds.append(DeclaredIndexList.recordedFields(of: index))
            try session.run(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO \(schema.indexes) (name, collection, fields) VALUES ($1, $2, $3)
                        ON CONFLICT (name) DO NOTHING
                        """, binds: binds))
            try session.run("COMMIT")
        } catch {
            _ = try? session.unlessCancelled("ROLLBACK")
            throw error
        }
        // Statistics, so that the planner knows what the new expressions hold.
        try session.run(PostgresQuery(unsafeSQL: "ANALYZE \(schema.documents)"))
    }

    /// Adds the indexes recorded in the schema to `list`.
    func load(into list: DeclaredIndexList) throws {
        let rows = try session.run(
            PostgresQuery(unsafeSQL: "SELECT collection, fields FROM \(schema.indexes) ORDER BY declared"))
        for row in rows {
            let (collection, fields) = try row.decode((String, String).self)
            list.add(recordedCollection: collection, fields: fields)
        }
    }

    /// `tether_idx_` and a hash of the index's collection and fields: PostgreSQL cuts names at 63 bytes, and a
    /// collection name alone may be longer.
    static func name(of index: DocumentIndex) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: the same in every process and every run
        for byte in index.description.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "tether_idx_" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
