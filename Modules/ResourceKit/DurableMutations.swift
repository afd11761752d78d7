import Dispatch
import Logging
import MutationOutboxKit
import PersistenceKit
import Synchronization
import TetherClock
import TetherConcurrency

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A service's durable mutations: the outbox they are written to, the lanes that order them, the waits between
/// attempts, and the optimistic updates defined by name, which are what lets a layer be shown again after a restart.
///
/// Invariant: a key is in ``State/active`` from the moment its mutation is enqueued or resumed until it settles, so
/// that resuming twice never sends one mutation twice.
final class DurableMutations: Sendable {
    struct State: Sendable {
        var configuration = MutationConfiguration()
        var definitions: [String: @Sendable (Data?) throws -> OptimisticUpdate] = [:]
        /// The turn of the last durable mutation of each lane, which the next one waits for.
        var lanes: [String: LaneTurn] = [:]
        /// The idempotency keys of the durable mutations in this process, not yet settled.
        var active: Set<String> = []
        /// The mutations waiting to be tried again, by number.
        var waits: [UInt64: OneShot<Void>] = [:]
    }

    let state = LockedValue(State())
    /// How many mutations wait to be tried again: read on every response, without the lock.
    private let waiting = Atomic<Int>(0)
    /// Where removals and moves to the failed list are written, in order, off the callers' threads.
    private let queue = DispatchQueue(label: "tether.mutation-outbox")
    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    var configuration: MutationConfiguration {
        get { state.withLock { $0.configuration } }
        set { state.withLock { $0.configuration = newValue } }
    }

    /// The update defined as `name`, made for `body`; nil when none is defined.
    func definedUpdate(_ name: String, body: Data?) throws -> OptimisticUpdate? {
        if name == OptimisticUpdate.removingName { return .removing }
        guard let make = state.withLock({ $0.definitions[name] }) else { return nil }
        return try make(body)
    }

    // MARK: The outbox

    /// Writes `entry` to the outbox on the caller's thread, and marks its key active; the error says why not.
    func enqueue(_ entry: OutboxEntry) -> Result<OutboxEntry, PersistenceError> {
        guard let outbox = configuration.outbox else {
            return .failure(
                PersistenceError(
                    .closed, "no outbox is configured (Service.mutationConfiguration.outbox)", id: entry.key))
        }
        do {
            var entry = entry
            entry.sequence = try outbox.enqueue(entry)
            state.withLock { _ = $0.active.insert(entry.key) }
            return .success(entry)
        } catch {
            return .failure(error)
        }
    }

    /// Marks `key` active; false when it is already (a resumed mutation sent by this process already).
    func activate(_ key: String) -> Bool {
        state.withLock { $0.active.insert(key).inserted }
    }

    /// After a mutation settles: its entry is removed (sent, or cancelled) or moved to the failed list (`failure`).
    /// A cancelled one's entry is removed before this returns, as `mutate` wrote it: a process that ends right after
    /// `cancel()` never sends it again. The others are recorded on the outbox queue — an entry left behind by a
    /// process that ended first is sent again under the same key, which the server answers without applying it twice.
    func settle(_ entry: OutboxEntry, lane: String, turn: LaneTurn, failure: String?, cancelled: Bool) {
        turn.requestCompleted()
        let outbox = state.withLock { state -> (any MutationOutbox)? in
            state.active.remove(entry.key)
            // A turn cancelled while it waits is not over until the one before it is: it stays the lane's last, so
            // that a mutation made meanwhile still waits for that one.
            if state.lanes[lane] === turn, turn.isOver { state.lanes[lane] = nil }
            return state.configuration.outbox
        }
        guard let outbox else { return }
        let logger = logger
        let record: @Sendable () -> Void = {
            do {
                if let failure {
                    try outbox.markFailed(key: entry.key, reason: failure)
                } else {
                    try outbox.remove(key: entry.key)
                }
            } catch {
                // The entry stays pending: after a restart it is sent again, under the same key.
                logger.warning(
                    "the outbox could not record a settled mutation",
                    metadata: ["key": "\(entry.key)", "url": "\(entry.url)", "error": "\(error)"])
            }
        }
        if cancelled { record() } else { queue.async(execute: record) }
    }

    /// Runs `body` on the outbox queue, after every write asked for before, and returns its result.
    func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    // MARK: Lanes

    /// A new turn, now the last of `lane`, and the turn it waits for.
    func enterLane(_ lane: String) -> (turn: LaneTurn, previous: LaneTurn?) {
        state.withLock { state in
            let previous = state.lanes[lane].flatMap { $0.isOver ? nil : $0 }
            let turn = LaneTurn(waits: previous != nil)
            state.lanes[lane] = turn
            return (turn, previous)
        }
    }

    // MARK: Waiting out transient failures

    /// Suspends until the wait after `failures` transient failures ends, the server answers another request, or
    /// the task is cancelled.
    func waitToRetry(after failures: Int, id: UInt64, timeSource: any TimeSource) async {
        let (base, cap) = state.withLock { ($0.configuration.retryBackoff, $0.configuration.maxRetryBackoff) }
        var delay = max(base, .zero)
        for _ in 1..<max(failures, 1) where delay < cap { delay = min(delay * 2, cap) }
        let wake = OneShot<Void>()
        state.withLock { state in state.waits[id] = wake }
        waiting.add(1, ordering: .sequentiallyConsistent)
        let timer = timeSource.schedule(after: min(delay, cap)) { wake.fire() }
        await withTaskCancellationHandler {
            await wake.wait()
        } onCancel: {
            wake.fire()
        }
        timer.cancel()
        state.withLock { state in state.waits[id] = nil }
        waiting.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// The server answered a request: every mutation waiting to be tried again is tried now.
    func serverAnswered() {
        guard waiting.load(ordering: .sequentiallyConsistent) > 0 else { return }
        let wakes = state.withLock { Array($0.waits.values) }
        for wake in wakes { wake.fire() }
    }
}
