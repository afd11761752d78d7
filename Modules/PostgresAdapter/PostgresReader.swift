import DocumentStoreKit
import PersistenceKit
import PostgresNIO
import TetherJSON

/// Reads over one session, inside a read (a `REPEATABLE READ` snapshot) or a write.
struct PostgresReader: DocumentReader {
    let session: PostgresSession
    let schema: PostgresSchema
    /// The declared indexes, whose paths the compiled queries write out.
    let indexes: DeclaredIndexList

    func document(id: String, in collection: String) throws -> StoredDocument? {
        try CollectionName.validate(collection)
        var binds = PostgresBindings()
        binds.append(collection)
        binds.append(id)
        let rows = try session.run(
            PostgresQuery(
                unsafeSQL: "SELECT body::text FROM \(schema.documents) WHERE collection = $1 AND id = $2",
                binds: binds), collection: collection, id: id)
        guard let row = rows.first(where: { _ in true }) else { return nil }
        let body = try decode(row, String.self, collection: collection, id: id)
        return StoredDocument(validatedID: id, body: try Self.parse(body, collection: collection, id: id))
    }

    func documents(matching query: DocumentQuery) throws -> [StoredDocument] {
        try query.checkRunnable()
        let sql = PostgresQueryCompiler.select(
            query, from: schema.documents, indexed: indexes.paths(in: query.collection))
        var documents: [StoredDocument] = []
        for row in try session.run(sql, collection: query.collection) {
            let (id, body) = try decode(row, (String, String).self, collection: query.collection)
            documents.append(
                StoredDocument(validatedID: id, body: try Self.parse(body, collection: query.collection, id: id)))
        }
        return documents
    }

    func count(matching query: DocumentQuery) throws -> Int {
        try query.checkRunnable()
        let sql = PostgresQueryCompiler.count(
            query, from: schema.documents, indexed: indexes.paths(in: query.collection))
        let rows = try session.run(sql, collection: query.collection)
        return try rows.first(where: { _ in true }).map { Int(try decode($0, Int64.self)) } ?? 0
    }

    func collectionNames() throws -> [String] {
        try session.run(
            PostgresQuery(unsafeSQL: "SELECT DISTINCT collection FROM \(schema.documents) ORDER BY collection")
        ).map { try decode($0, String.self) }
    }

    func commitNumber() throws -> UInt64 {
        let rows = try session.run(PostgresQuery(unsafeSQL: "SELECT value FROM \(schema.meta) WHERE key = 'commit'"))
        return try rows.first(where: { _ in true }).map { UInt64(try decode($0, Int64.self)) } ?? 0
    }

    /// Decodes a row, or says which column did not read.
    func decode<T: PostgresDecodable>(
        _ row: PostgresRow, _ type: T.Type, collection: String? = nil, id: String? = nil
    ) throws -> T {
        do {
            return try row.decode(T.self)
        } catch {
            throw PersistenceError(
                .corrupt, "a row of \(schema.documents) did not read as \(T.self): \(error)", file: session.store,
                collection: collection, id: id, cause: error)
        }
    }

    func decode<A: PostgresDecodable, B: PostgresDecodable>(
        _ row: PostgresRow, _ type: (A, B).Type, collection: String? = nil
    ) throws -> (A, B) {
        do {
            return try row.decode((A, B).self)
        } catch {
            throw PersistenceError(
                .corrupt, "a row of \(schema.documents) did not read as \((A, B).self): \(error)", file: session.store,
                collection: collection, cause: error)
        }
    }

    static func parse(_ text: String, collection: String, id: String) throws -> JSONValue {
        do {
            return try JSONValue(parsing: text)
        } catch {
            throw PersistenceError(
                .corrupt, "the stored document does not read as a Tether document: \(error)", collection: collection,
                id: id, cause: error)
        }
    }
}
