public import PersistenceKit
import TetherConcurrency

/// A ``MutationOutbox`` in memory: for tests, and for mutations ordered and retried without surviving the process.
/// Entries last as long as the outbox object, which is the one that holds them all.
public final class InMemoryMutationOutbox: MutationOutbox {
    private struct State {
        var entries: [OutboxEntry] = []
        var lastSequence: Int64 = 0
    }

    private let state = LockedValue(State())

    /// Makes an empty outbox.
    public init() {}

    /// Keeps `entry`, numbered after every entry before it.
    public func enqueue(_ entry: OutboxEntry) throws(PersistenceError) -> Int64 {
        let sequence = state.withLock { state -> Int64? in
            guard !state.entries.contains(where: { $0.key == entry.key }) else { return nil }
            state.lastSequence += 1
            var entry = entry
            entry.sequence = state.lastSequence
            entry.failure = nil
            state.entries.append(entry)
            return state.lastSequence
        }
        guard let sequence else {
            throw PersistenceError(.duplicateID, "an outbox entry with this key exists already", id: entry.key)
        }
        return sequence
    }

    /// The pending entries, in sequence order.
    public func pendingEntries() throws(PersistenceError) -> [OutboxEntry] {
        state.withLock { $0.entries.filter { $0.failure == nil } }
    }

    /// Every pending entry: this object is the only one that holds its entries.
    public func takePending() throws(PersistenceError) -> [OutboxEntry] {
        try pendingEntries()
    }

    /// The failed entries, in sequence order.
    public func failedEntries() throws(PersistenceError) -> [OutboxEntry] {
        state.withLock { $0.entries.filter { $0.failure != nil } }
    }

    /// Removes the entry with `key`, if there is one.
    public func remove(key: String) throws(PersistenceError) {
        state.withLock { $0.entries.removeAll { $0.key == key } }
    }

    /// Moves the entry with `key` to the failed list.
    public func markFailed(key: String, reason: String) throws(PersistenceError) {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.key == key }) else { return }
            state.entries[index].failure = reason
        }
    }

    /// Removes every failed entry.
    public func removeFailedEntries() throws(PersistenceError) {
        state.withLock { $0.entries.removeAll { $0.failure != nil } }
    }
}
