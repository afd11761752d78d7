import Foundation
import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting

/// The store's statistics say why a query ran again instead of being brought up to date from the changed
/// documents — the figure to drive towards zero.
@Suite("Live queries: reruns counted by reason")
struct RerunStatisticsTests {
    static func item(_ id: String, group: String = "a", name: String? = nil) -> JSONValue {
        ["_id": .string(id), "group": .string(group), "name": .string(name ?? id)]
    }

    /// Writes one commit and waits until the live queries have applied it.
    static func write(_ store: Store, _ body: @escaping @Sendable (WriteTransaction) throws -> Void) async throws {
        try await store.write(body)
        await store.waitForLiveQueries()
    }

    @Test(
        "A document removed before an offset window shifts the window: the delivered result follows",
        arguments: TestStores.kinds)
    func offsetWindowShifts(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await Self.write(store) { transaction in
            for id in ["a0", "a1", "a2", "a3"] { try transaction.collection("items").upsert(Self.item(id)) }
        }
        let delivered = LockedValue<[String]>([])
        let query = items.find("group == 'a'").sort("name").offset(1).limit(2)
        let liveQuery = try query.observeLocal { documents, _ in delivered.withLock { $0 = documents.map(\.id) } }
        try await eventually { delivered.withLock { $0 } == ["a1", "a2"] }
        // a0 is in no result (it is before the offset), yet its removal moves a1 out and a3 in.
        try await Self.write(store) { _ = try $0.collection("items").remove(id: "a0") }
        #expect(try await query.exec().map(\.id) == ["a2", "a3"])
        try await eventually { delivered.withLock { $0 } == ["a2", "a3"] }
        await liveQuery.stop()
    }

    @Test(
        "Incremental when it can be; offset, window refill and many changes are reruns, each counted",
        arguments: TestStores.kinds)
    func reasons(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await Self.write(store) { transaction in
            for id in ["a1", "a2", "a3", "a4"] { try transaction.collection("items").upsert(Self.item(id)) }
        }
        // Called inline, in the engine's round: never busy when the next commit comes, so no change is held back
        // (held-back changes are counted the same way: see `HeldBackTests.manyHeldBack`).
        let byName = items.find("group == 'a'").sort("name")
        let plain = try byName.observeLocal(deliverOn: .inline) { _, _ in }
        let window = try byName.limit(2).observeLocal(deliverOn: .inline) { _, _ in }
        let offset = try byName.offset(1).observeLocal(deliverOn: .inline) { _, _ in }
        await store.waitForLiveQueries()
        let start = store.statistics
        #expect(start.reruns.total == 0 && start.evaluations == 3)

        // a0 sorts first: the plain query and the window take it in place; the offset query must run again.
        try await Self.write(store) { try $0.collection("items").upsert(Self.item("a0")) }
        var statistics = store.statistics
        #expect(statistics.incrementalUpdates - start.incrementalUpdates == 2)
        #expect(statistics.reruns.offset == 1)
        #expect(statistics.reruns.total == 1)

        // a0 leaves the full window: it must be refilled from the store.
        try await Self.write(store) { _ = try $0.collection("items").remove(id: "a0") }
        statistics = store.statistics
        #expect(statistics.reruns.windowRefill == 1)
        #expect(statistics.reruns.offset == 2)

        // More changed documents than the engine reads one by one: every affected query runs.
        try await Self.write(store) { transaction in
            for index in 0..<600 { try transaction.collection("items").upsert(Self.item("b\(index)")) }
        }
        statistics = store.statistics
        #expect(statistics.reruns.manyChanges == 3)
        #expect(statistics.reruns.total == 6)
        #expect(statistics.reruns.laterCommit == 0, "each write was applied before the next")
        for liveQuery in [plain, window, offset] { await liveQuery.stop() }
    }
}
