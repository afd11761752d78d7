import GRDB

/// What makes a file one of Tether's: the table its schema is named by, every table its migrations create, and the
/// application id its last migration sets in the file's header (`PRAGMA application_id`). A file is opened only when
/// its id is this one — or, written by a version before the id, when it holds no table but these.
protocol TetherSchema: Sendable {
    /// What the file is to a user — "store", "cache", "outbox" — in the messages that refuse one.
    static var role: String { get }
    static var table: String { get }
    static var tables: Set<String> { get }
    static var applicationID: Int32 { get }
    static var migrator: DatabaseMigrator { get }
}

extension TetherSchema {
    /// The migration that marks the file as this schema's.
    static func registerApplicationID(in migrator: inout DatabaseMigrator, as name: String) {
        let applicationID = applicationID
        migrator.registerMigration(name) { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
        }
    }
}

/// The document store's schema, created and upgraded by GRDB's `DatabaseMigrator`. Migrations are only ever
/// appended: a file written by an older version is upgraded in place when it is opened.
enum DocumentSchema: TetherSchema {
    static let role = "store"
    static let table = "tether_documents"
    static let tables: Set<String> = [
        table, "tether_meta", "tether_change_log", "tether_change_log_readers", "tether_indexes", "grdb_migrations",
        "sqlite_stat1",
    ]
    /// "TETD".
    static let applicationID: Int32 = 0x5445_5444

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: documents") { db in
            // One table for every collection: `body` is the document as compact JSON text (keys sorted), queried
            // with SQLite's JSON functions. The rowid is the key the change tracker follows.
            try db.execute(
                sql: """
                    CREATE TABLE tether_documents (
                        rowid INTEGER PRIMARY KEY,
                        collection TEXT NOT NULL,
                        id TEXT NOT NULL,
                        body TEXT NOT NULL
                    );
                    CREATE UNIQUE INDEX tether_documents_collection_id ON tether_documents(collection, id);
                    """)
        }
        migrator.registerMigration("v2: commit numbers") { db in
            // The number of the last commit that changed a document: what readers report and change sets carry,
            // kept in the file so that it carries on across restarts.
            try db.execute(
                sql: """
                    CREATE TABLE tether_meta (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
                    INSERT INTO tether_meta (key, value) VALUES ('commit', 0);
                    """)
        }
        migrator.registerMigration("v3: change log") { db in
            // One entry per commit, written in the commit's own transaction, so that every process on the file can
            // bring the others' commits into its change feed (SQLiteChangeLog). Readers register how far they have
            // read, so that entries are pruned only once every live reader has passed them.
            try db.execute(
                sql: """
                    CREATE TABLE tether_change_log (
                        commit_number INTEGER PRIMARY KEY,
                        changes TEXT NOT NULL,
                        written_at REAL NOT NULL
                    );
                    CREATE TABLE tether_change_log_readers (
                        reader TEXT PRIMARY KEY NOT NULL,
                        position INTEGER NOT NULL,
                        seen_at REAL NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v4: declared indexes") { db in
            // The indexes an application declared (`DocumentStore.createIndex`), so that every process on the file
            // knows which paths its queries must write out for SQLite to use them.
            try db.execute(
                sql: """
                    CREATE TABLE tether_indexes (
                        name TEXT PRIMARY KEY NOT NULL,
                        collection TEXT NOT NULL,
                        fields TEXT NOT NULL
                    );
                    """)
        }
        registerApplicationID(in: &migrator, as: "v5: application id")
        return migrator
    }
}

/// The entity cache's schema.
enum EntityCacheSchema: TetherSchema {
    static let role = "cache"
    static let table = "tether_entities"
    static let tables: Set<String> = [table, "grdb_migrations", "sqlite_stat1"]
    /// "TETC".
    static let applicationID: Int32 = 0x5445_5443

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: entities") { db in
            try db.execute(
                sql: """
                    CREATE TABLE tether_entities (
                        key TEXT PRIMARY KEY NOT NULL,
                        body BLOB NOT NULL,
                        headers TEXT NOT NULL,
                        timestamp REAL NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        registerApplicationID(in: &migrator, as: "v2: application id")
        return migrator
    }
}
