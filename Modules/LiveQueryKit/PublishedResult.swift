import Foundation
import TetherConcurrency

/// A query's latest result, and which of its observers are ready for the next one. The engine publishes each result
/// here once: it goes at once to the observers that are idle, and an observer still busy with an earlier result
/// takes the latest when it signals (its lane's idle callback). So a result costs work only for the observers that
/// can take it now, however many are busy — a thousand observers on one slow queue cost one submission each per
/// handler call, not one per result.
///
/// When no observer is idle, the engine holds the query's changes back instead of computing results nobody can
/// take (``holdIfNoneIdle()``); the first observer to go idle then wakes it.
final class PublishedResult: Sendable {
    struct State: Sendable {
        var snapshot: Snapshot?
        /// When ``snapshot`` was published, on the engine's time source: for an inspector (one clock read per
        /// result, none per delivery).
        var publishedAt: Date?
        /// Counts published results; each observer's entry in ``taken`` says which it last took.
        var generation: UInt64 = 0
        var taken: [ObjectIdentifier: UInt64] = [:]
        /// Observers idle with the latest result, waiting for the next.
        var idle: [ObjectIdentifier: Registration] = [:]
        /// The query's changes are held back: the next observer to go idle wakes it.
        var isHeld = false
    }

    /// What an observer that just went idle does.
    enum IdleAction {
        /// Nothing newer: it waits for the next result.
        case wait
        /// Takes this result, newer than its last.
        case take(Snapshot)
        /// Wakes the query, whose changes are held back.
        case wake
    }

    let state = LockedValue(State())

    /// Records `snapshot` as the latest result; returns the idle observers, to submit it to outside the lock.
    func publish(_ snapshot: Snapshot, at now: Date) -> [Registration] {
        state.withLock { state in
            state.snapshot = snapshot
            state.publishedAt = now
            state.generation += 1
            state.isHeld = false
            let ready = Array(state.idle.values)
            state.idle.removeAll(keepingCapacity: true)
            for registration in ready { state.taken[ObjectIdentifier(registration)] = state.generation }
            return ready
        }
    }

    /// A new observer: it takes the query's current result now (it is counted as having the latest), or — `idle`,
    /// the query not yet evaluated — waits for the first.
    func join(_ registration: Registration, idle: Bool) {
        state.withLock { state in
            let id = ObjectIdentifier(registration)
            if idle { state.idle[id] = registration } else { state.taken[id] = state.generation }
        }
    }

    /// The latest result, if `registration`'s observer has not taken it: what it takes when it signals. For an
    /// inspector.
    func owed(to registration: Registration) -> (snapshot: Snapshot, publishedAt: Date?)? {
        state.withLock { state in
            let id = ObjectIdentifier(registration)
            guard state.idle[id] == nil, state.taken[id, default: 0] < state.generation,
                let snapshot = state.snapshot
            else { return nil }
            return (snapshot, state.publishedAt)
        }
    }

    /// `registration`'s observer signalled and nothing waits in its lane.
    func becameIdle(_ registration: Registration) -> IdleAction {
        state.withLock { state in
            let id = ObjectIdentifier(registration)
            if !state.isHeld, let snapshot = state.snapshot, state.taken[id, default: 0] < state.generation {
                state.taken[id] = state.generation
                return .take(snapshot)
            }
            state.idle[id] = registration
            return state.isHeld ? .wake : .wait
        }
    }

    /// Marks the query's changes held back if no observer is idle; returns whether it did.
    func holdIfNoneIdle() -> Bool {
        state.withLock { state in
            state.isHeld = state.idle.isEmpty
            return state.isHeld
        }
    }

    /// The held-back changes were applied without a new result (they did not alter it).
    func release() {
        state.withLock { $0.isHeld = false }
    }

    /// The latest result, with the idle observers that have not taken it, to submit it to outside the lock; nil when
    /// every idle observer has it. An observer busy when a result was published, that goes idle while the query's
    /// changes are held back, waits for the result those changes bring (``becameIdle(_:)``); when they turn out not
    /// to alter the result, nothing is published, and it takes this one instead.
    func offerToIdleBehind() -> (Snapshot, [Registration])? {
        state.withLock { state in
            guard !state.isHeld, let snapshot = state.snapshot else { return nil }
            let generation = state.generation
            let behind = state.idle.filter { id, _ in state.taken[id, default: 0] < generation }
            guard !behind.isEmpty else { return nil }
            for id in behind.keys {
                state.idle[id] = nil
                state.taken[id] = generation
            }
            return (snapshot, Array(behind.values))
        }
    }

    /// Forgets an observer that ended.
    func remove(_ registration: Registration) {
        state.withLock { state in
            let id = ObjectIdentifier(registration)
            state.idle[id] = nil
            state.taken[id] = nil
        }
    }
}
