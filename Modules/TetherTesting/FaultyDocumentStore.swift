public import DocumentStoreKit
import PersistenceKit
import TetherConcurrency

/// A document store that fails writes at random, for fault-injection tests. A failed write throws a
/// `PersistenceError` of kind `ioError`: most fail before anything is written; some (`afterCommit`) fail after the
/// transaction committed, as when an acknowledgement is lost — so a caller may only count on what returned.
/// Reads fail at their own rate (``Faults/readFailure``), before anything is read. The change feed is `base`'s.
public final class FaultyDocumentStore: DocumentStore {
    /// How often a write fails (0…1), and which share of the failures come after the commit.
    public struct Faults: Sendable, Hashable {
        /// How often a write fails.
        public var failure: Double
        /// Of the failures, the share that happens after the commit.
        public var afterCommit: Double
        /// How often a read fails.
        public var readFailure: Double

        /// Makes a mix.
        public init(failure: Double = 0, afterCommit: Double = 0, readFailure: Double = 0) {
            self.failure = failure
            self.afterCommit = afterCommit
            self.readFailure = readFailure
        }
    }

    private let base: any DocumentStore
    private let state: LockedValue<(faults: Faults, random: SeededRandom, failed: Int, failedAfterCommit: Int)>

    /// Wraps `base`; `seed` makes the failures repeatable.
    public init(base: any DocumentStore, faults: Faults, seed: UInt64) {
        self.base = base
        self.state = LockedValue((faults, SeededRandom(seed: seed), 0, 0))
    }

    /// The faults in force; change them at any time.
    public var faults: Faults {
        get { state.withLock { $0.faults } }
        set { state.withLock { $0.faults = newValue } }
    }

    /// How many writes failed, and how many of those after their commit.
    public var failures: (total: Int, afterCommit: Int) {
        state.withLock { ($0.failed, $0.failedAfterCommit) }
    }

    /// The base store's feed.
    public var changes: ChangeFeed { base.changes }

    /// Declares the index on the base store, untouched by faults.
    public func createIndex(_ index: DocumentIndex) async throws {
        try await base.createIndex(index)
    }

    /// The base store's indexes.
    public func declaredIndexes() async throws -> [DocumentIndex] {
        try await base.declaredIndexes()
    }

    /// Runs `body` in a write transaction of `base`, unless this write is drawn to fail.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any DocumentTransaction) throws -> T) async throws -> T
    {
        let (fails, afterCommit) = state.withLock { state -> (Bool, Bool) in
            let fails = state.random.next() < state.faults.failure
            let afterCommit = fails && state.random.next() < state.faults.afterCommit
            if fails { state.failed += 1 }
            if afterCommit { state.failedAfterCommit += 1 }
            return (fails, afterCommit)
        }
        if fails && !afterCommit {
            throw PersistenceError(.ioError, "fault injected: the write failed before anything was written")
        }
        let result = try await base.write(body)
        if afterCommit {
            throw PersistenceError(.ioError, "fault injected: the write committed, but its acknowledgement was lost")
        }
        return result
    }

    /// Reads from `base`, unless this read is drawn to fail.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader) throws -> T) async throws -> T {
        let fails = state.withLock { $0.random.next() < $0.faults.readFailure }
        if fails { throw PersistenceError(.ioError, "fault injected: the read failed") }
        return try await base.read(body)
    }
}
