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
final class PoolBlockade: Sendable {
    private let width = ProcessInfo.processInfo.activeProcessorCount
    private let held = LockedValue(0)
    private let released = LockedValue(false)
    private let gate = DispatchSemaphore(value: 0)

    /// Returns once a blocking task holds each of the pool's threads. Call it off the pool (a task that prefers a
    /// `DispatchQueueExecutor`).
    func hold() async throws {
        for _ in 0..<width {
            Task.detached { [held, gate] in
                held.withLock { $0 += 1 }
                _ = gate.wait(timeout: .now() + 20)
                held.withLock { $0 -= 1 }
            }
        }
        try await eventually { held.withLock { $0 } == width }
    }

    /// Whether every blocking task still holds its thread.
    var isHolding: Bool { held.withLock { $0 } == width }

    /// Lets the blocking tasks return; once only.
    func release() {
        let first = released.withLock { released in
            defer { released = true }
            return !released
        }
        guard first else { return }
        for _ in 0..<width { gate.signal() }
    }
}
