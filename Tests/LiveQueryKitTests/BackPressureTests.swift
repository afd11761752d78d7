import DeliveryKit
import DocumentStoreKit
import Foundation
import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTestingTraits

@Suite("The next-signal contract and evaluation cost", .timeLimit(minutes: 2), .leakChecked)
struct BackPressureTests {
    @Test(
        "A slow handler under 10,000 commits: a handful of deliveries, never more than 2 held, ends on the final state",
        arguments: TestStores.kinds)
    func slowHandler(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let received = Received()
        let pending = LockedValue<SignalNext?>(nil)
        let liveQuery = try items.find("store_id == 'abc123'").sort("n", direction: .descending).limit(1)
            .observeLocalWithNextSignal { documents, event, signalNext in
                received.append(documents, event)
                // A slow consumer: it signals only when the test says so.
                pending.withLock { $0 = signalNext }
            }
        try await received.wait { $0.count == 1 }
        // 10,000 commits while the handler holds its signal.
        for index in 0..<10_000 {
            try await items.upsert([
                "_id": .string("d\(index % 100)"), "store_id": "abc123", "n": .number(Double(index)),
            ])
        }
        #expect(received.count == 1, "no delivery may happen while the handler has not signalled")
        // Signal a few times: each signal brings at most one delivery, the latest.
        for _ in 0..<5 {
            guard let signalNext = pending.withLock({ $0.take() }) else { break }
            signalNext()
            // The delivery the signal allows has been handled (the handler holds a new signal), or there was
            // nothing newer to deliver and the handler already has the final state.
            try await received.wait { _ in pending.withLock { $0 != nil } || received.last == ["d99"] }
        }
        try await received.wait { $0.last == ["d99"] }
        let all = received.all
        // The initial result, then at most one per signal (5): a handful, not 10,000.
        #expect(all.count <= 6, "a handful: \(all.count)")
        let statistics = liveQuery.deliveryStatistics
        #expect(statistics.heldHighWater <= 2)
        let final = try await items.find("store_id == 'abc123'").sort("n", direction: .descending).limit(1).exec()
        #expect(final.first?.int("n") == 9_999)
        await liveQuery.stop()
    }

    @Test("The writer never waits for observers: 2,000 commits take as long with a stuck observer as with none")
    func writerNotBlocked() async throws {
        let store = Store.inMemory()
        let items = store.collection("items")
        let liveQuery = try items.findAll().observeLocalWithNextSignal { _, _, _ in }  // never signals
        for index in 0..<2_000 { try await items.upsert(["_id": .string("d\(index)")]) }
        #expect(try await items.findAll().exec().count == 2_000)
        #expect(liveQuery.deliveryStatistics.heldHighWater <= 2)
        await liveQuery.stop()
    }

    @Test(
        "Writes to other groups cost a query no evaluation; identical queries are evaluated once per commit",
        arguments: TestStores.kinds)
    func evaluationCost(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let received = (0..<10).map { _ in Received() }
        let queries = try received.map { recorder in
            try items.find("store_id == $args.s", args: ["s": "abc123"]).sort("_id").observeLocal {
                recorder.append($0, $1)
            }
        }
        for recorder in received { try await recorder.wait { $0.count == 1 } }
        let before = store.statistics
        #expect(before.evaluations == 1, "10 identical queries, one evaluation")
        for index in 0..<200 { try await items.upsert(["_id": .string("o\(index)"), "store_id": "other"]) }
        try await store.collection("elsewhere").upsert(["_id": "z"])
        try await items.upsert(["_id": "mine", "store_id": "abc123"])
        for recorder in received { try await recorder.wait { $0.last == ["mine"] } }
        let after = store.statistics
        let updates = (after.evaluations + after.incrementalUpdates) - (before.evaluations + before.incrementalUpdates)
        #expect(updates == 1, "only the relevant commit updated the result: \(after)")
        #expect(
            after.evaluations == before.evaluations,
            "and it did so from the changed document, without a query: \(after)")
        for query in queries { await query.stop() }
    }
}
