import DeliveryKit
import Dispatch
import Foundation
import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

@Suite("Observing: the four variants, owners, lifetimes, events", .timeLimit(minutes: 1), .leakChecked)
struct ObservationTests {
    final class Owner: Sendable {}

    static func item(_ id: String, _ store: String = "abc123", name: String? = nil, price: Double = 1) -> JSONValue {
        ["_id": .string(id), "store_id": .string(store), "name": .string(name ?? id), "price": .number(price)]
    }

    @Test(
        "observeLocal: .initial first and once, then .update after each change that alters the result",
        arguments: TestStores.kinds)
    func observeLocal(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await items.upsert(Self.item("a"))
        let received = Received()
        let liveQuery = try items.find("store_id == 'abc123'").sort("name").observeLocal { received.append($0, $1) }
        try await received.wait { $0.count == 1 }
        try await items.upsert(Self.item("b"))
        try await received.wait { $0.last == ["a", "b"] }
        try await items.upsert(Self.item("x", "other"))  // irrelevant: no delivery
        try await items.remove(id: "a")
        try await received.wait { $0.last == ["b"] }
        let all = received.all
        #expect(all.first?.event == .initial)
        #expect(all.dropFirst().allSatisfy { !$0.event.isInitial })
        #expect(all.map(\.ids) == [["a"], ["a", "b"], ["b"]])
        guard case .update(let update) = all[2].event else { return }
        #expect(update.deletions == [0])
        #expect(update.oldDocuments.map(\.id) == ["a", "b"])
        await liveQuery.stop()
    }

    @Test("The four variants deliver the same results; deliverOn uses the queue given", arguments: TestStores.kinds)
    func variants(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let queue = DispatchQueue(label: "test.deliver")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let received = (0..<4).map { _ in Received() }
        let onQueue = LockedValue(true)
        let queries = [
            try items.findAll().observeLocal { received[0].append($0, $1) },
            try items.findAll().observeLocal(deliverOn: queue) { documents, event in
                if DispatchQueue.getSpecific(key: key) != 7 { onQueue.withLock { $0 = false } }
                received[1].append(documents, event)
            },
            try items.findAll().observeLocalWithNextSignal { documents, event, signalNext in
                received[2].append(documents, event)
                signalNext()
            },
            try items.findAll().observeLocalWithNextSignal(deliverOn: queue) { documents, event, signalNext in
                received[3].append(documents, event)
                DispatchQueue.global().async { signalNext() }  // signal from elsewhere, later
            },
        ]
        for index in 0..<5 { try await items.upsert(Self.item("d\(index)")) }
        for recorder in received { try await recorder.wait { $0.last?.count == 5 } }
        #expect(onQueue.withLock { $0 })
        #expect(store.statistics.queries == 1, "identical queries share one evaluation")
        #expect(store.statistics.observers == 4)
        for query in queries { await query.stop() }
        #expect(store.statistics.observers == 0)
    }

    @Test(
        "stop(): no handler runs after it returns; it waits for one in progress on another thread",
        arguments: TestStores.kinds)
    func stop(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let entered = LockedValue(false)
        let release = LockedValue(false)
        let running = LockedValue(false)
        let calls = LockedValue(0)
        let liveQuery = try items.findAll().observeLocal { _, _ in
            calls.withLock { $0 += 1 }
            running.withLock { $0 = true }
            entered.withLock { $0 = true }
            while !release.withLock({ $0 }) { usleepMilliseconds(1) }
            running.withLock { $0 = false }
        }
        try await eventually { entered.withLock { $0 } }
        // stop() on another thread must wait for the handler, which is held until released.
        let stopReturned = LockedValue(false)
        // A thread of its own: stop() blocks while it waits, and must not hold up Swift concurrency's threads.
        Thread.detachNewThread {
            liveQuery.stop()
            stopReturned.withLock { $0 = true }
        }
        // stop() has begun once the observation reads as stopped; the handler is still held, so stop() must not
        // have returned.
        try await eventually { liveQuery.isStopped }
        #expect(!stopReturned.withLock { $0 }, "stop() returned while the handler was running")
        release.withLock { $0 = true }
        try await eventually { stopReturned.withLock { $0 } }
        #expect(!running.withLock { $0 })
        for index in 0..<20 { try await items.upsert(Self.item("d\(index)")) }
        await store.waitForLiveQueries()
        #expect(calls.withLock { $0 } == 1, "no call after stop()")
        #expect(liveQuery.isStopped)
    }

    @Test("A handler may stop its own query", arguments: TestStores.kinds)
    func stopFromHandler(kind: String) async throws {
        let store = try TestStores.make(kind)
        let holder = LockedValue<LiveQuery?>(nil)
        let calls = LockedValue(0)
        let liveQuery = try store.collection("items").findAll().observeLocal { _, _ in
            calls.withLock { $0 += 1 }
            holder.withLock { $0 }?.stop()
        }
        holder.withLock { $0 = liveQuery }
        try await store.collection("items").upsert(Self.item("a"))
        await store.waitForLiveQueries()
        try await store.collection("items").upsert(Self.item("b"))
        await store.waitForLiveQueries()
        #expect(calls.withLock { $0 } <= 2)
        holder.withLock { $0 = nil }
    }

    @Test("Dropping the handle ends the observation and releases it", arguments: TestStores.kinds)
    func handleDeinit(kind: String) async throws {
        let store = try TestStores.make(kind)
        let received = Received()
        do {
            let liveQuery = try store.collection("items").findAll().observeLocal { received.append($0, $1) }
            try await received.wait { $0.count == 1 }
            withExtendedLifetime(liveQuery) {}
        }
        // The handler's call may still be returning: a running call keeps its owner — here the handle — alive until
        // it ends (OwnershipKit), so the handle can go a moment after this scope, on the delivery's thread. (Under
        // ThreadSanitizer it once had not yet gone when this was checked at once.)
        try await eventually { store.statistics.observers == 0 }
        try await store.collection("items").upsert(Self.item("a"))
        // The observation ended with the handle: its lane is cancelled, so once the engine has caught up with the
        // write, no call can come later.
        await store.waitForLiveQueries()
        #expect(received.count == 1)
    }

    @Test(
        "Owner-tied: the handle may be discarded; the observation ends when the owner is deallocated",
        arguments: TestStores.kinds)
    func ownerTied(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let received = Received()
        var owner: Owner? = Owner()
        try items.findAll().observeLocal(owner: owner!) { received.append($0, $1) }
        try await received.wait { $0.count == 1 }
        try await items.upsert(Self.item("a"))
        try await received.wait { $0.last == ["a"] }
        owner = nil
        try await items.upsert(Self.item("b"))
        try await items.upsert(Self.item("c"))
        // The engine's next round ends the observer (its owner is gone) before applying the changes; a result that
        // reached its lane before would be dropped at the call. Once caught up, no call can come later.
        await store.waitForLiveQueries()
        #expect(received.last == ["a"], "no delivery after the owner is gone")
        #expect(store.statistics.observers == 0)
        withExtendedLifetime(owner) {}
    }

    @Test("As an AsyncSequence: next() is the signal; initial first; ends when stopped", arguments: TestStores.kinds)
    func sequence(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let snapshots = try items.findAll().sort("name").snapshots()
        var iterator = snapshots.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.event == .initial)
        #expect(first?.documents.isEmpty == true)
        try await items.upsert(Self.item("b"))
        try await items.upsert(Self.item("a"))
        var latest = try await iterator.next()
        while latest?.documents.count != 2 { latest = try await iterator.next() }
        #expect(latest?.documents.map(\.id) == ["a", "b"])
        snapshots.stop()
        #expect(try await iterator.next() == nil)
    }
}

func usleepMilliseconds(_ milliseconds: Int) {
    Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
}
