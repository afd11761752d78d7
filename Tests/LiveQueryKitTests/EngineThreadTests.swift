import Dispatch
import Foundation
import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// The engine runs on a queue of its own, not on Swift concurrency's cooperative pool: with every thread of the pool
/// held by someone else's work, a live query still gets its first result and its updates.
///
/// The pool is held for as long as the engine takes (milliseconds), or 20 s at most when it is broken: every other
/// test in the process waits meanwhile, so the test runs on a queue of its own, one store at a time, and never beside
/// the tests whose deadlines assume a processor. (Not `.onDedicatedThread`: the stress suites hold its slots for
/// minutes under ThreadSanitizer.)
@Suite("Live queries: the engine's own thread", .serialized, .loadsEveryCore, .timeLimit(.minutes(3)))
struct EngineThreadTests {
    @Test(
        "With every thread of Swift concurrency's pool blocked, a live query's first result and its update arrive",
        arguments: TestStores.kinds)
    func poolHeld(kind: String) async throws {
        try await withTaskExecutorPreference(DispatchQueueExecutor(label: "tether.test.pool-held")) {
            try await whilePoolHeld(kind)
        }
    }

    func whilePoolHeld(_ kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await items.upsert(["_id": "a", "group": "g"])
        let received = LockedValue<[[String]]>([])
        let queue = DispatchQueue(label: "handler")
        let blockade = PoolBlockade()
        defer { blockade.release() }
        try await blockade.hold()
        let liveQuery = try items.find("group == 'g'").sort("_id").observeLocal(deliverOn: queue) { documents, _ in
            received.withLock { $0.append(documents.map(\.id)) }
        }
        try await eventually(within: .seconds(10)) { received.withLock { $0 } == [["a"]] }
        try await items.upsert(["_id": "b", "group": "g"])
        try await eventually(within: .seconds(10)) { received.withLock { $0.last } == ["a", "b"] }
        #expect(blockade.isHolding, "the pool was held throughout")
        blockade.release()
        await liveQuery.stop()
    }
}

/// Holds every thread of Swift concurrency's cooperative pool (one per core) with a task that blocks, until
/// released or for 20 s at most: what an application's blocking call or long computation does to the pool.
///
/// The blocking tasks hold their threads only once all of them have one at the same moment. One that arrives first
/// waits 100 ms for the others, then gives its thread back and queues again: holding part of the pool while the rest
/// works through a long queue would slow every other test for as long as that took (seen: 20 s, at the start of a
/// full run, and PostgreSQL stores beside it missed their 10 s start-up). Each time it queues again it waits twice as
/// long, up to 1.6 s: when every queued job is slow (under ThreadSanitizer, with heavy suites beside it), the others
/// took longer than 100 ms to come, every time, and the blockade was not in place after 60 s.
final class PoolBlockade: Sendable {
    private struct State {
        /// Blocking tasks on a thread now.
        var arrived = 0
        /// Every one arrived at once: they stay until released.
        var isHolding = false
        var isReleased = false
    }

    private let width = ProcessInfo.processInfo.activeProcessorCount
    private let state = LockedValue(State())
    private let gate = DispatchSemaphore(value: 0)
    /// Signalled by the last blocking task to arrive, once for each of the others.
    private let allHere = DispatchSemaphore(value: 0)

    /// Returns once a blocking task holds each of the pool's threads. Call it off the pool (a task that prefers a
    /// `DispatchQueueExecutor`).
    func hold() async throws {
        for _ in 0..<width {
            Task.detached { [self] in
                var patience = Duration.milliseconds(100)
                while !(await arrive(waiting: patience)) {
                    patience = min(patience * 2, .milliseconds(1_600))
                    await Task.yield()
                }
                _ = gate.wait(timeout: .now() + 20)
                state.withLock { $0.arrived -= 1 }
            }
        }
        try await eventually(within: .seconds(60)) { isHolding }
    }

    /// On a pool thread: true once every blocking task holds one (it stays), false when the others did not come
    /// within `patience` (it has left, and queues again).
    private func arrive(waiting patience: Duration) async -> Bool {
        let width = self.width
        let isLast = state.withLock { state -> Bool in
            state.arrived += 1
            if state.arrived == width { state.isHolding = true }
            return state.isHolding
        }
        if isLast {
            for _ in 1..<width { allHere.signal() }  // wakes the ones waiting below
            return true
        }
        // Blocking on purpose: this task's job is to hold the thread.
        let milliseconds = Int(patience / .milliseconds(1))
        if allHere.wait(timeout: .now() + .milliseconds(milliseconds)) == .success { return true }
        // Leaves only if the last one has not just arrived: once holding, nobody leaves.
        return state.withLock { state in
            if state.isHolding { return true }
            state.arrived -= 1
            return false
        }
    }

    /// Whether every blocking task holds its thread now.
    var isHolding: Bool { state.withLock { $0.isHolding && !$0.isReleased && $0.arrived == width } }

    /// Lets the blocking tasks return; once only.
    func release() {
        let first = state.withLock { state in
            defer { state.isReleased = true }
            return !state.isReleased
        }
        guard first else { return }
        for _ in 0..<width { gate.signal() }
    }
}
