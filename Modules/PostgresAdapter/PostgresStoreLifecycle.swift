import DocumentStoreKit
import PersistenceKit
import TetherConcurrency

/// Where a PostgreSQL store is in its life, and the operations waiting on it — one state under one lock.
///
/// ```
/// starting ──run() has opened the schema──▶ running ──graceful shutdown──▶ draining ──no write in flight──▶ finished
///     └──────────────run() failed or ended──────────────────────────────────────────────────────────────▶ finished
/// ```
///
/// Operations that arrive while it starts wait (up to the connect timeout: a store nobody runs says so rather than
/// hanging, and a store whose `run()` is slow to start says what it is still doing); while it drains, reads go on
/// and new writes are refused; once finished, everything is refused.
final class PostgresStoreLifecycle: Sendable {
    /// What `run()` is doing while the store starts.
    enum StartPhase: Sendable {
        case connecting
        case preparingSchema(String)
        case loadingIndexes

        var description: String {
            switch self {
            case .connecting: "connecting to the server"
            case .preparingSchema(let schema):
                "creating schema \(schema)'s tables (under the schema's advisory lock, which another process starting on it may hold)"
            case .loadingIndexes: "loading the declared indexes"
            }
        }
    }

    private enum State {
        /// Nil until `run()` begins.
        case starting(StartPhase?)
        case running(ChangeLogPublisher)
        case draining(ChangeLogPublisher)
        case finished(PersistenceError)
    }

    private struct Locked {
        var state = State.starting(nil)
        var waiters: [UInt64: CheckedContinuation<ChangeLogPublisher, any Error>] = [:]
        var nextWaiter: UInt64 = 0
        var writesInFlight = 0
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    private let locked = LockedValue(Locked())
    private let store: String

    init(store: String) {
        self.store = store
    }

    // MARK: Operations

    /// The publisher, once the store runs; waits while it starts, up to `timeout`.
    ///
    /// - Throws: `PersistenceError.Kind.closed` once the store has finished (or, for a write, while it drains);
    ///   `PersistenceError.Kind.cannotOpen` when nothing runs it within `timeout`; `CancellationError`.
    func begin(write: Bool, timeout: Duration) async throws -> ChangeLogPublisher {
        if let publisher = try enter(write: write) { return publisher }
        let publisher = try await withThrowingTaskGroup(of: ChangeLogPublisher.self) { group in
            group.addTask { try await self.waitUntilRunning() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw self.notRunning(after: timeout)
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
        // It ran, but may have started draining since.
        guard let entered = try enter(write: write) else { return publisher }
        return entered
    }

    /// Why an operation gave up waiting for the store to start: nothing runs it, or what its `run()` is still doing.
    private func notRunning(after timeout: Duration) -> PersistenceError {
        let phase = locked.withLock { locked -> StartPhase? in
            if case .starting(let phase) = locked.state { return phase }
            return nil
        }
        let why =
            phase.map { "its run() is still \($0.description)" }
            ?? "run it (store.run(), or a ServiceGroup) before using it"
        return PersistenceError(
            .cannotOpen, "the PostgreSQL store is not running after \(timeout): \(why)", file: store)
    }

    /// Ends a write that `begin(write: true, …)` let in.
    func endWrite() {
        let drained = locked.withLock { locked -> [CheckedContinuation<Void, Never>] in
            locked.writesInFlight -= 1
            guard locked.writesInFlight == 0, case .draining = locked.state else { return [] }
            defer { locked.drained = [] }
            return locked.drained
        }
        for continuation in drained { continuation.resume() }
    }

    /// The publisher, if the store runs now; nil while it starts.
    private func enter(write: Bool) throws -> ChangeLogPublisher? {
        try locked.withLock { locked throws -> ChangeLogPublisher? in
            switch locked.state {
            case .starting:
                return nil
            case .running(let publisher):
                if write { locked.writesInFlight += 1 }
                return publisher
            case .draining(let publisher):
                guard !write else {
                    throw PersistenceError(.closed, "the PostgreSQL store is shutting down: no new writes", file: store)
                }
                return publisher
            case .finished(let error):
                throw error
            }
        }
    }

    private func waitUntilRunning() async throws -> ChangeLogPublisher {
        let id = locked.withLock { locked in
            defer { locked.nextWaiter += 1 }
            return locked.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let outcome = locked.withLock { locked -> Result<ChangeLogPublisher, any Error>? in
                    switch locked.state {
                    case .starting:
                        guard !Task.isCancelled else { return .failure(CancellationError()) }
                        locked.waiters[id] = continuation
                        return nil
                    case .running(let publisher), .draining(let publisher):
                        return .success(publisher)
                    case .finished(let error):
                        return .failure(error)
                    }
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            locked.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    // MARK: The run

    /// `run()` has moved on to `phase` of starting the store.
    func starting(_ phase: StartPhase) {
        locked.withLock { locked in
            if case .starting = locked.state { locked.state = .starting(phase) }
        }
    }

    /// The store is open: operations go ahead.
    func started(_ publisher: ChangeLogPublisher) {
        let waiters = locked.withLock { locked -> [CheckedContinuation<ChangeLogPublisher, any Error>] in
            guard case .starting = locked.state else { return [] }
            locked.state = .running(publisher)
            defer { locked.waiters = [:] }
            return Array(locked.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: publisher) }
    }

    /// Refuses new writes and returns once none is in flight.
    func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = locked.withLock { locked -> Bool in
                if case .running(let publisher) = locked.state { locked.state = .draining(publisher) }
                guard case .draining = locked.state, locked.writesInFlight > 0 else { return true }
                locked.drained.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The store has stopped: every operation from now on, and every one waiting, fails with `error`.
    func finish(_ error: PersistenceError) {
        let waiters = locked.withLock { locked -> [CheckedContinuation<ChangeLogPublisher, any Error>] in
            if case .finished = locked.state { return [] }
            locked.state = .finished(error)
            defer { locked.waiters = [:] }
            return Array(locked.waiters.values)
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    /// Whether the store has finished.
    var isFinished: Bool {
        locked.withLock { locked in
            if case .finished = locked.state { return true }
            return false
        }
    }
}
