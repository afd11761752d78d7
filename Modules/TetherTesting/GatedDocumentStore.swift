public import DocumentStoreKit
import TetherConcurrency

/// A document store whose next read a test can hold at a gate, before it reaches `base`: to make a reader land
/// after commits made while it was held. Its feed relays `base`'s without the changed documents
/// (`ChangeSet.documents`), as another process's commits arrive, so that a consumer must read them from the store.
/// Everything else is `base`'s.
///
/// ```swift
/// let store = GatedDocumentStore(base: InMemoryDocumentStore())
/// let gate = store.holdNextRead()
/// // …something reads: it passes the gate and is held…
/// try await eventually { gate.isReached }
/// // …commit while the read is held…
/// gate.open()
/// ```
public final class GatedDocumentStore: DocumentStore {
    private let base: any DocumentStore
    private let nextGate = LockedValue<AsyncGate?>(nil)
    private let relay: ChangeSubscription

    /// The feed: `base`'s change sets, without their documents.
    public let changes = ChangeFeed()

    /// Wraps `base`, whose feed must have published nothing yet (a new store).
    public init(base: any DocumentStore) {
        self.base = base
        relay = base.changes.subscribeInline { [changes] set in
            if set.hasUnknownChanges {
                changes.publishUnknownChanges(in: set.commits)
            } else {
                changes.publish(set.changes, commit: set.commits.upperBound)
            }
        } finished: { [changes] in
            changes.finish()
        }
    }

    deinit {
        relay.cancel()
    }

    /// Holds the next read at the returned gate until it is opened.
    public func holdNextRead() -> AsyncGate {
        let gate = AsyncGate()
        nextGate.withLock { $0 = gate }
        return gate
    }

    /// Reads from `base`, after the gate if one is set for this read.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader) throws -> T) async throws -> T {
        if let gate = nextGate.withLock({ $0.take() }) { await gate.pass() }
        return try await base.read(body)
    }

    /// Writes to `base`.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any DocumentTransaction) throws -> T) async throws -> T
    {
        try await base.write(body)
    }

    /// Declares the index on `base`.
    public func createIndex(_ index: DocumentIndex) async throws {
        try await base.createIndex(index)
    }

    /// The base store's indexes.
    public func declaredIndexes() async throws -> [DocumentIndex] {
        try await base.declaredIndexes()
    }
}
