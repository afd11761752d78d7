import GRDB

/// The mutation outbox's schema: a file of its own, never moved aside — what it holds is the user's work, not a
/// copy of the server's.
enum OutboxSchema: TetherSchema {
    static let role = "outbox"
    static let table = "tether_outbox"
    static let tables: Set<String> = [table, "sqlite_sequence", "grdb_migrations", "sqlite_stat1"]
    /// "TETO".
    static let applicationID: Int32 = 0x5445_544F

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: outbox") { db in
            // AUTOINCREMENT: a sequence number is never given twice, even after the newest entry is removed, so
            // the order of entries is the order their mutations were made. `format` is the version of `details`:
            // a newer version's entries are left alone. `owner` is the outbox object that sends the entry
            // ("<pid>:<uuid>"): another takes it only once that process has ended.
            try db.execute(
                sql: """
                    CREATE TABLE tether_outbox (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        key TEXT NOT NULL UNIQUE,
                        lane TEXT NOT NULL,
                        format INTEGER NOT NULL,
                        body BLOB,
                        details TEXT NOT NULL,
                        failure TEXT,
                        owner TEXT
                    );
                    """)
        }
        registerApplicationID(in: &migrator, as: "v2: application id")
        return migrator
    }
}
