import DeliveryKit
import Foundation
import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// An actor of the tests' own, standing for `@MainActor` (whose queue a Linux test process may not drain).
@globalActor
actor ScreenActor {
    static let shared = ScreenActor()
}

/// `deliverOn:` with DeliveryKit executors, and async handlers on their own isolation.
@Suite("Live queries: executors and isolated handlers", .leakChecked)
struct DeliveryOptionsTests {
    /// An executor that counts the work it runs, and runs it on a queue.
    final class CountingExecutor: DeliveryExecutor {
        let queue = DispatchQueue(label: "counting")
        let count = LockedValue(0)
        func execute(_ work: @escaping @Sendable () -> Void) {
            count.withLock { $0 += 1 }
            queue.async(execute: work)
        }
    }

    @Test(
        "A DeliveryKit executor carries every call, in the plain and the next-signal forms", arguments: TestStores.kinds
    )
    func executors(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let executor = CountingExecutor()
        let seen = LockedValue<[[String]]>([])
        let plain = try items.findAll().sort("_id").observeLocal(deliverOn: executor) { documents, _ in
            dispatchPrecondition(condition: .onQueue(executor.queue))
            seen.withLock { $0.append(documents.map(\.id)) }
        }
        try await eventually { seen.withLock { $0.count } == 1 }
        try await items.upsert(["_id": "a"])
        try await eventually { seen.withLock { $0.last } == ["a"] }
        #expect(executor.count.withLock { $0 } >= 2, "the initial result and the update went through the executor")
        await plain.stop()

        let inline = LockedValue(0)
        let signalled = try items.findAll().observeLocalWithNextSignal(deliverOn: .inline) { _, _, signalNext in
            inline.withLock { $0 += 1 }
            signalNext()
        }
        try await eventually { inline.withLock { $0 } == 1 }
        await signalled.stop()
    }

    @Test(
        "An async handler runs on its own actor, one call at a time, and gets the latest result after",
        arguments: TestStores.kinds)
    func isolatedHandler(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let calls = LockedValue<[[String]]>([])
        let running = LockedValue(0)
        let overlapped = LockedValue(false)
        let firstCallGate = AsyncGate()
        let liveQuery = try items.findAll().sort("_id").observeLocalAsync { @ScreenActor documents, _ in
            ScreenActor.shared.assertIsolated()
            if running.withLock({
                $0 += 1
                return $0
            }) > 1 {
                overlapped.withLock { $0 = true }
            }
            calls.withLock { $0.append(documents.map(\.id)) }
            if calls.withLock({ $0.count }) == 1 { await firstCallGate.pass() }
            running.withLock { $0 -= 1 }
        }
        try await eventually { calls.withLock { $0.count } == 1 }
        for index in 0..<50 { try await items.upsert(["_id": .string(String(format: "d%02d", index))]) }
        await store.waitForLiveQueries()
        #expect(calls.withLock { $0.count } == 1, "no second call while the first has not returned")
        firstCallGate.open()
        try await eventually { calls.withLock { $0.last?.count } == 50 }
        #expect(
            calls.withLock { $0.count } == 2, "one more call, with the latest result: \(calls.withLock { $0.count })")
        #expect(!overlapped.withLock { $0 })
        await liveQuery.stop()
    }

    @Test("An owner-tied async observation ends with its owner: no call after the owner is gone")
    func isolatedOwnerTied() async throws {
        let store = Store.inMemory()
        let items = store.collection("items")
        let calls = LockedValue(0)
        var owner: Owner? = Owner()
        try items.findAll().observeLocalAsync(owner: owner!) { @ScreenActor _, _ in
            calls.withLock { $0 += 1 }
        }
        try await eventually { calls.withLock { $0 } == 1 }
        owner = nil
        try await items.upsert(["_id": "after"])
        await store.waitForLiveQueries()
        // A witness that must hear of the write after the owner-tied observer would have.
        let witnessed = LockedValue(false)
        let witness = try items.findAll().observeLocalAsync { @ScreenActor documents, _ in
            if documents.contains(where: { $0.id == "after" }) { witnessed.withLock { $0 = true } }
        }
        try await eventually { witnessed.withLock { $0 } }
        await ScreenActor.shared.run {}
        #expect(calls.withLock { $0 } == 1, "no call once the owner was gone")
        await witness.stop()
    }
}

final class Owner: Sendable {}

extension ScreenActor {
    func run(_ body: () -> Void) { body() }
}
