import Foundation
import Logging
public import MutationOutboxKit
public import PersistenceKit
import PostgresNIO
import TetherConcurrency

/// A `MutationOutbox` in PostgreSQL, shared by every instance of a service that uses the same database and schema:
/// a durable mutation survives its instance, and any instance sends what an ended one left.
///
/// Each entry is held by the outbox object that enqueued or took it, with a session advisory lock on the outbox's
/// own connection: another instance takes it (``takePending()``) only once that connection has ended — its process
/// died, or it was closed — so two instances never send one mutation twice. An enqueue is one transaction, the lock
/// taken inside it, before any other session can see the entry. Like every synchronous part, it waits for the
/// server on the caller's thread; ResourceKit calls it on its own queue, but for `enqueue`, which runs where
/// `mutate` is called.
///
/// ```swift
/// service.mutationConfiguration.outbox = try PostgresMutationOutbox(url: "postgres://app@db.internal/app")
/// try service.resumeMutations()
/// ```
public final class PostgresMutationOutbox: MutationOutbox, CustomStringConvertible {
    /// Where it connects (never the password).
    public let configuration: PostgresConfiguration
    private let table: String
    private let connection: DedicatedConnection
    /// The sequence numbers this object holds a lock on.
    private let held: LockedValue<Set<Int64>>

    /// Makes an outbox; it connects at its first use.
    ///
    /// - Throws: `PersistenceError.Kind.cannotOpen` naming the setting that cannot work.
    public init(configuration: PostgresConfiguration) throws(PersistenceError) {
        try configuration.validate()
        self.configuration = configuration
        let table = "\(configuration.schema).tether_outbox"
        self.table = table
        let held = LockedValue<Set<Int64>>([])
        self.held = held
        let space = "tether-outbox:\(configuration.schema)"
        connection = DedicatedConnection(
            "the outbox", configuration: configuration,
            preparation: [
                """
                CREATE TABLE IF NOT EXISTS \(table) (sequence bigserial PRIMARY KEY, key text NOT NULL UNIQUE,
                    lane text NOT NULL, format integer NOT NULL, body bytea, details text NOT NULL, failure text)
                """
            ],
            opened: { connection in
                // A new session holds nothing: take again what this object held, or let go of what another took.
                for sequence in held.withLock({ $0 }) {
                    let rows = try connection.query(
                        PostgresQuery(
                            unsafeSQL: "SELECT pg_try_advisory_lock(hashtext($1), ($2 % 2147483647)::integer)",
                            binds: Self.lockBinds(space, sequence)),
                        logger: configuration.logger
                    ).wait()
                    let locked = try rows.first(where: { _ in true })?.decode(Bool.self) ?? false
                    if !locked { held.withLock { _ = $0.remove(sequence) } }
                }
            })
        lockSpace = space
    }

    /// Makes an outbox from a URL (see ``PostgresConfiguration/init(url:)``).
    public convenience init(url: String) throws(PersistenceError) {
        try self.init(configuration: PostgresConfiguration(url: url))
    }

    /// The advisory locks' first key: one space per schema.
    private let lockSpace: String

    /// `PostgreSQL mutation outbox postgres://user@host:port/database`.
    public var description: String { "PostgreSQL mutation outbox \(configuration)" }

    /// Writes `entry` and takes its lock, in one transaction.
    public func enqueue(_ entry: OutboxEntry) throws(PersistenceError) -> Int64 {
        var binds = PostgresBindings()
        binds.append(entry.key)
        binds.append(entry.lane)
        binds.append(OutboxEntry.format)
        do { try binds.append(entry.body) } catch {
            throw PersistenceError(.invalidDocument, "the body cannot be sent: \(error)", id: entry.key)
        }
        binds.append(entry.details)
        try connection.run("BEGIN", id: entry.key)
        do throws(PersistenceError) {
            let existing = try connection.run(
                "SELECT 1 FROM \(table) WHERE key = $1", Self.binds(entry.key), id: entry.key)
            guard existing.first(where: { _ in true }) == nil else {
                throw PersistenceError(
                    .duplicateID, "an outbox entry with this key exists already", file: configuration.description,
                    id: entry.key)
            }
            let rows = try connection.run(
                """
                INSERT INTO \(table) (key, lane, format, body, details) VALUES ($1, $2, $3, $4, $5)
                RETURNING sequence
                """, binds, id: entry.key)
            let sequence = try decode(rows, as: Int64.self, key: entry.key) ?? 0
            try connection.run(
                "SELECT pg_advisory_lock(hashtext($1), ($2 % 2147483647)::integer)",
                Self.lockBinds(lockSpace, sequence), id: entry.key)
            try connection.run("COMMIT", id: entry.key)
            held.withLock { _ = $0.insert(sequence) }
            return sequence
        } catch {
            _ = try? connection.run("ROLLBACK")
            throw error
        }
    }

    /// The pending entries, in sequence order.
    public func pendingEntries() throws(PersistenceError) -> [OutboxEntry] {
        try entries(failed: false)
    }

    /// Takes the pending entries whose lock no other session holds, with those this object holds already.
    public func takePending() throws(PersistenceError) -> [OutboxEntry] {
        var taken: [OutboxEntry] = []
        for entry in try entries(failed: false) {
            if held.withLock({ $0.contains(entry.sequence) }) {
                taken.append(entry)
                continue
            }
            let locked = try connection.run(
                "SELECT pg_try_advisory_lock(hashtext($1), ($2 % 2147483647)::integer)",
                Self.lockBinds(lockSpace, entry.sequence), id: entry.key)
            guard try decode(locked, as: Bool.self, key: entry.key) == true else { continue }
            // Settled by its holder between the read and the lock: gone, or failed. Not this object's to send.
            let still = try connection.run(
                "SELECT 1 FROM \(table) WHERE sequence = $1 AND failure IS NULL", Self.binds(entry.sequence),
                id: entry.key)
            guard still.first(where: { _ in true }) != nil else {
                try unlock(entry.sequence, key: entry.key)
                continue
            }
            held.withLock { _ = $0.insert(entry.sequence) }
            taken.append(entry)
        }
        return taken
    }

    /// The failed entries, in sequence order.
    public func failedEntries() throws(PersistenceError) -> [OutboxEntry] {
        try entries(failed: true)
    }

    /// Removes the entry with `key`, and lets go of its lock.
    public func remove(key: String) throws(PersistenceError) {
        let rows = try connection.run(
            "DELETE FROM \(table) WHERE key = $1 RETURNING sequence", Self.binds(key), id: key)
        if let sequence = try decode(rows, as: Int64.self, key: key) { try release(sequence, key: key) }
    }

    /// Moves the entry with `key` to the failed list, and lets go of its lock.
    public func markFailed(key: String, reason: String) throws(PersistenceError) {
        var binds = PostgresBindings()
        binds.append(reason)
        binds.append(key)
        let rows = try connection.run(
            "UPDATE \(table) SET failure = $1 WHERE key = $2 RETURNING sequence", binds, id: key)
        if let sequence = try decode(rows, as: Int64.self, key: key) { try release(sequence, key: key) }
    }

    /// Removes every failed entry.
    public func removeFailedEntries() throws(PersistenceError) {
        try connection.run("DELETE FROM \(table) WHERE failure IS NOT NULL")
    }

    /// Lets go of every entry this object holds — before it returns, so that another instance's next
    /// ``takePending()`` takes them — and closes the connection: later calls fail with `closed`. (Were the server
    /// unreachable, the locks go when it sees the connection end.)
    public func close() {
        let released = held.withLock { held in
            defer { held.removeAll() }
            return held
        }
        if !released.isEmpty { _ = try? connection.run("SELECT pg_advisory_unlock_all()") }
        connection.close()
    }

    private func release(_ sequence: Int64, key: String) throws(PersistenceError) {
        guard held.withLock({ $0.remove(sequence) }) != nil else { return }
        try unlock(sequence, key: key)
    }

    private func unlock(_ sequence: Int64, key: String) throws(PersistenceError) {
        try connection.run(
            "SELECT pg_advisory_unlock(hashtext($1), ($2 % 2147483647)::integer)",
            Self.lockBinds(lockSpace, sequence), id: key)
    }

    private func entries(failed: Bool) throws(PersistenceError) -> [OutboxEntry] {
        let rows = try connection.run(
            """
            SELECT sequence, key, lane, format, body, details, failure FROM \(table)
            WHERE failure IS \(failed ? "NOT " : "")NULL ORDER BY sequence
            """)
        var entries: [OutboxEntry] = []
        for row in rows {
            let key: String
            let decoded: (Int64, String, String, Int, Data?, String, String?)
            do {
                decoded = try row.decode((Int64, String, String, Int, Data?, String, String?).self)
                key = decoded.1
            } catch {
                configuration.logger.warning(
                    "an outbox row does not read", metadata: ["store": "\(configuration)", "error": "\(error)"])
                continue
            }
            do throws(PersistenceError) {
                entries.append(
                    try OutboxEntry(
                        sequence: decoded.0, key: key, lane: decoded.2, body: decoded.4, failure: decoded.6,
                        details: decoded.5, format: decoded.3))
            } catch {
                configuration.logger.warning(
                    "an outbox entry is left unread",
                    metadata: ["store": "\(configuration)", "key": "\(key)", "reason": "\(error.message)"])
            }
        }
        return entries
    }

    private func decode<T: PostgresDecodable>(_ rows: PostgresQueryResult, as type: T.Type, key: String)
        throws(PersistenceError) -> T?
    {
        do {
            return try rows.first(where: { _ in true })?.decode(T.self)
        } catch {
            throw PersistenceError(
                .corrupt, "the outbox's answer does not read: \(error)", file: configuration.description, id: key,
                cause: error)
        }
    }

    private static func binds(_ value: some PostgresNonThrowingEncodable) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(value)
        return binds
    }

    private static func lockBinds(_ space: String, _ sequence: Int64) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(space)
        binds.append(sequence)
        return binds
    }
}
