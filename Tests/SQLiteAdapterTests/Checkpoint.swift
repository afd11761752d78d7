import GRDB

/// Copies every page from the WAL into the database file and empties the WAL (so a test can damage the file).
func checkpoint(_ path: String) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { _ = try $0.checkpoint(.truncate) }
    try queue.close()
}

/// Another program's SQLite database: one table of its own, nothing of Tether's.
func makeOtherProgramsDatabase(_ path: String) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.write { try $0.execute(sql: "CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)") }
    try queue.close()
}

/// Runs `statements` on the database at `path` (created if need be) as another program would: no Tether checks.
func executeSQL(at path: String, _ statements: String...) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
        for statement in statements { try db.execute(sql: statement) }
    }
    try queue.close()
}

/// The application id in the header of the database at `path`.
func applicationID(of path: String) throws -> Int32? {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { try Int32.fetchOne($0, sql: "PRAGMA application_id") }
}

/// Puts `body` into the store's table as another program (or an older version) could: no Tether checks.
func insertRawDocument(_ path: String, collection: String, id: String, body: String) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.write {
        try $0.execute(
            sql: "INSERT INTO tether_documents (collection, id, body) VALUES (?, ?, ?)",
            arguments: [collection, id, body])
    }
    try queue.close()
}
