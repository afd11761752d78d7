import Synchronization

/// Writes in flight: a store marks each write transaction from before it begins (waiting for the writer included)
/// until it has committed — its changes published — or rolled back, so that a consumer computing ahead of a commit
/// it expects can tell a writer that is still writing from one that has stopped.
///
/// From the feed alone, a commit that runs long looks like a writer that has stopped: one that checkpoints SQLite's
/// write-ahead log takes about 2 ms, where a fast writer commits every quarter of a millisecond. LiveQueryKit's engine
/// does not compute a result ahead of a busy observer's signal while a write is in flight: the commit coming would
/// make that result out of date.
///
/// ```swift
/// store.changes.beginWrite()
/// defer { store.changes.endWrite() }
/// // … the transaction, its commit, publish(_:commit:documents:) …
/// ```
extension ChangeFeed {
    /// Marks a write as begun (for ``DocumentStore`` implementations): pair with ``endWrite()``.
    public func beginWrite() {
        writesInFlight.add(1, ordering: .relaxed)
    }

    /// Marks a write begun with ``beginWrite()`` as ended: committed and published, or rolled back.
    public func endWrite() {
        writesInFlight.subtract(1, ordering: .relaxed)
    }

    /// Whether a write has begun in this process and not yet ended: a commit is likely to be published soon.
    /// Another process's writes are not seen here.
    public var isWriting: Bool {
        writesInFlight.load(ordering: .relaxed) > 0
    }
}
