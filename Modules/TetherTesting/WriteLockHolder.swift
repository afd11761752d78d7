import Dispatch
public import DocumentStoreKit
import TetherConcurrency
public import TetherJSON

/// Another connection's write lock, for a test of what waits for it: ``hold(_:writing:into:)`` begins a write on
/// `store` — a document written, so that SQLite takes the file's lock — and keeps its transaction open, on the
/// store's writer thread, until ``release()`` (60 s at most). For a store whose writes run on a thread of their own.
///
/// ```swift
/// let holder = try await WriteLockHolder.hold(try SQLiteDocumentStore(path: path))
/// // … a second connection to `path` now waits for the lock …
/// try await holder.release()
/// ```
public struct WriteLockHolder: Sendable {
    private let gate: DispatchSemaphore
    private let write: Task<Void, any Error>

    /// Begins the write and returns once it holds the lock.
    public static func hold(
        _ store: any DocumentStore, writing document: JSONValue = ["_id": "held"], into collection: String = "items"
    ) async throws -> WriteLockHolder {
        let gate = DispatchSemaphore(value: 0)
        let holding = LockedValue(false)
        let write = Task {
            try await store.write { transaction in
                try transaction.upsert(document, into: collection)
                holding.withLock { $0 = true }
                _ = gate.wait(timeout: .now() + 60)
            }
        }
        try await eventually(within: .seconds(10)) { holding.withLock { $0 } }
        return WriteLockHolder(gate: gate, write: write)
    }

    /// Commits the write, and returns once it has ended.
    public func release() async throws {
        gate.signal()
        try await write.value
    }
}
