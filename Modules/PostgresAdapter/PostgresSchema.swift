import PersistenceKit
import PostgresNIO

/// Tether's tables in one PostgreSQL schema, and the names written into SQL for them. The schema's name is checked
/// (`PostgresIdentifier`): no quoting is needed, and no user text reaches the SQL.
///
/// - `tether_documents (collection, id, body jsonb)`: the documents; `collection` and `id` compare by bytes
///   (`COLLATE "C"`), as every Tether store orders ids.
/// - `tether_meta (key, value)`: the number of the last commit (`commit`), and the schema's version.
/// - `tether_change_log (commit_number, changes, written_at)`: one entry per commit, written in the commit's own
///   transaction — what other processes read to learn of it (`ChangeLogEntry`).
/// - `tether_change_log_readers (reader, position, seen_at)`: how far each listening process has read, so that
///   entries are pruned only once every live listener has passed them.
/// - `tether_indexes (name, collection, fields)`: the declared indexes.
struct PostgresSchema: Sendable {
    /// The version this code writes; a database of a later version is refused rather than misread.
    static let version: Int64 = 1

    let schema: String

    var documents: String { "\(schema).tether_documents" }
    var meta: String { "\(schema).tether_meta" }
    var changeLog: String { "\(schema).tether_change_log" }
    var readers: String { "\(schema).tether_change_log_readers" }
    var indexes: String { "\(schema).tether_indexes" }
    /// The `NOTIFY` channel that wakes listeners of this schema's commits.
    var channel: String { "tether_changes_\(schema)" }

    /// Creates what is missing, in one transaction, under an advisory lock: processes that start together do not
    /// race each other's `CREATE … IF NOT EXISTS`. Returns the number of the last commit.
    ///
    /// - Throws: `PersistenceError.Kind.foreignFile` when the schema holds a later version's tables.
    func prepare(_ session: PostgresSession) throws -> UInt64 {
        try session.run("BEGIN")
        do {
            var lock = PostgresBindings()
            lock.append("tether:\(schema)")
            try session.run(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext($1))", binds: lock))
            for statement in [
                "CREATE SCHEMA IF NOT EXISTS \(schema)",
                "CREATE TABLE IF NOT EXISTS \(meta) (key text COLLATE \"C\" PRIMARY KEY, value bigint NOT NULL)",
                """
                CREATE TABLE IF NOT EXISTS \(documents) (collection text COLLATE "C" NOT NULL, \
                id text COLLATE "C" NOT NULL, body jsonb NOT NULL, PRIMARY KEY (collection, id))
                """,
                """
                CREATE TABLE IF NOT EXISTS \(changeLog) (commit_number bigint PRIMARY KEY, changes text NOT NULL, \
                written_at timestamptz NOT NULL DEFAULT now())
                """,
                """
                CREATE TABLE IF NOT EXISTS \(readers) (reader text PRIMARY KEY, position bigint NOT NULL, \
                seen_at timestamptz NOT NULL DEFAULT now())
                """,
                """
                CREATE TABLE IF NOT EXISTS \(indexes) (name text PRIMARY KEY, collection text NOT NULL, \
                fields text NOT NULL, declared bigserial)
                """,
            ] {
                try session.run(PostgresQuery(unsafeSQL: statement))
            }
            var versions = PostgresBindings()
            versions.append(Self.version)
            try session.run(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO \(meta) (key, value) VALUES ('commit', 0), ('schema_version', $1)
                        ON CONFLICT (key) DO NOTHING
                        """, binds: versions))
            var commit: Int64 = 0
            for row in try session.run(PostgresQuery(unsafeSQL: "SELECT key, value FROM \(meta)")) {
                let (key, value) = try row.decode((String, Int64).self)
                if key == "schema_version", value > Self.version {
                    throw PersistenceError(
                        .foreignFile,
                        "schema \(schema) was written by a later Tether (version \(value); this one reads up to \(Self.version)): left as it is"
                    )
                }
                if key == "commit" { commit = value }
            }
            try session.run("COMMIT")
            return UInt64(commit)
        } catch {
            _ = try? session.unlessCancelled("ROLLBACK")
            throw error
        }
    }
}
