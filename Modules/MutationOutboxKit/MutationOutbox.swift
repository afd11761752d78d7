public import PersistenceKit

/// Where durable mutations wait to be sent: written before `mutate` returns, removed once the server has accepted
/// them, kept in a failed list when it refuses them for good. ResourceKit reads it again after a restart and sends
/// what is pending, in order.
///
/// The methods are synchronous and may block (they do file or network I/O). ``enqueue(_:)`` runs on the thread that
/// calls `mutate`, as a GRDB write does: when it returns, the mutation survives the process. The others run on
/// ResourceKit's outbox queue, one at a time, in the order they were asked for. Implementations:
/// ``InMemoryMutationOutbox`` here, `SQLiteMutationOutbox` in SQLiteAdapter; `MutationOutboxConformance` in
/// TetherTesting checks any other.
public protocol MutationOutbox: Sendable {
    /// Writes `entry` in one transaction and returns the sequence number it was given: greater than every number
    /// given before by this outbox. A failure (a full disk, a closed store) throws, and nothing is written.
    func enqueue(_ entry: OutboxEntry) throws(PersistenceError) -> Int64
    /// The pending entries, in sequence order. An entry written in a newer format than ``OutboxEntry/format`` is
    /// left where it is, out of this list, and logged.
    func pendingEntries() throws(PersistenceError) -> [OutboxEntry]
    /// Takes the pending entries this outbox object is to send, in sequence order: those it enqueued or took before,
    /// and those no other live outbox object on the same storage holds — never one another live object holds, so
    /// that two processes sharing an outbox never send one mutation twice. What an ended process held becomes
    /// takeable. Entries in a newer format are left, as by ``pendingEntries()``.
    func takePending() throws(PersistenceError) -> [OutboxEntry]
    /// The entries the server refused for good, in sequence order, with their ``OutboxEntry/failure``.
    func failedEntries() throws(PersistenceError) -> [OutboxEntry]
    /// Removes the entry with idempotency key `key`, pending or failed; a missing key is not an error.
    func remove(key: String) throws(PersistenceError)
    /// Moves the pending entry with idempotency key `key` to the failed list, saying why.
    func markFailed(key: String, reason: String) throws(PersistenceError)
    /// Removes every failed entry.
    func removeFailedEntries() throws(PersistenceError)
}
