public import DocumentStoreKit
import TetherConcurrency

/// A document store whose next read a test can hold at a gate, before it reaches `base`: to make a reader land
/// after commits made while it was held. Its feed relays `base`'s — by default without the changed documents
/// (`ChangeSet.documents`), as another process's commits arrive, so that a consumer must read them from the store —
/// and can be held too, so that a reader sees commits whose changes have not reached the feed yet (as when a
/// writer's thread is slow to publish what it committed). Everything else is `base`'s.
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
    /// Change sets held back from the feed, in commit order; nil while the feed flows.
    private let held: LockedValue<[ChangeSet]?>

    /// The feed: `base`'s change sets, without their documents unless the store was made to relay them.
    public let changes = ChangeFeed()

    /// Wraps `base`, whose feed must have published nothing yet (a new store); `relaysDocuments` keeps the changed
    /// documents on the change sets, as a same-process store's commits carry them.
    public init(base: any DocumentStore, relaysDocuments: Bool = false) {
        self.base = base
        let held = LockedValue<[ChangeSet]?>(nil)
        self.held = held
        relay = base.changes.subscribeInline { [changes] set in
            let relayed = relaysDocuments ? set : set.withoutDocuments
            held.withLock { held in
                if held != nil { held!.append(relayed) } else { changes.republish(relayed) }
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

    /// Holds the feed: change sets wait here, in commit order, until ``releaseChanges(_:)``.
    public func holdChanges() {
        held.withLock { held in
            if held == nil { held = [] }
        }
    }

    /// Publishes the first `count` held change sets, the feed staying held; or, `count` nil, every one and lets the
    /// feed flow again.
    public func releaseChanges(_ count: Int? = nil) {
        held.withLock { held in
            guard let waiting = held else { return }
            let released = waiting.prefix(count ?? waiting.count)
            for set in released { changes.republish(set) }
            held = count == nil ? nil : Array(waiting.dropFirst(released.count))
        }
    }

    /// How many change sets wait in the held feed.
    public var heldChangeCount: Int {
        held.withLock { $0?.count ?? 0 }
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

extension ChangeSet {
    /// The same changes, without the changed documents.
    fileprivate var withoutDocuments: ChangeSet {
        hasUnknownChanges
            ? ChangeSet(unknownChangesIn: commits)
            : ChangeSet(commit: commits.upperBound, changes: changes)
    }
}

extension ChangeFeed {
    /// Publishes `set` as it came from another feed.
    fileprivate func republish(_ set: ChangeSet) {
        if set.hasUnknownChanges {
            publishUnknownChanges(in: set.commits)
        } else {
            publish(set.changes, commit: set.commits.upperBound, documents: set.documents)
        }
    }
}
