import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Many live queries of one shape with different `$args` — as a server observing per-customer lists has — cost per
/// commit only the queries whose argument the commit touches, and identical queries are evaluated once.
@Suite("Live queries: shared evaluation across parameters", .timeLimit(minutes: 2))
struct SharedEvaluationTests {
    static let stores = 20
    static let observersPerStore = 10

    static func item(_ id: Int, store: Int, name: String) -> JSONValue {
        ["_id": .string("i\(id)"), "store_id": .string("s\(store)"), "name": .string(name)]
    }

    static func query(_ items: StoreCollection, store: Int) -> PendingQuery {
        items.find("store_id == $args.store", args: ["store": .string("s\(store)")]).sort("name").limit(5)
    }

    @Test(
        "200 observers over 20 parameters: work per commit only for the parameters it touches, each ending right",
        arguments: TestStores.kinds)
    func perParameter(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await store.write { transaction in
            for id in 0..<200 {
                try transaction.collection("items").upsert(Self.item(id, store: id % Self.stores, name: "n\(id)"))
            }
        }
        let latest = LockedValue<[Int: [String]]>([:])
        var liveQueries: [LiveQuery] = []
        for observer in 0..<(Self.stores * Self.observersPerStore) {
            liveQueries.append(
                try Self.query(items, store: observer % Self.stores).observeLocal { documents, _ in
                    latest.withLock { $0[observer] = documents.map(\.id) }
                })
        }
        await store.waitForLiveQueries()
        let statistics = store.statistics
        #expect(statistics.queries == Self.stores, "identical queries share one evaluation")
        #expect(statistics.observers == Self.stores * Self.observersPerStore)
        #expect(statistics.evaluations == Self.stores)

        // Each commit moves one item between two stores, or renames it within one: it touches at most two
        // parameters, and only their queries do any work.
        var random = SeededRandom(seed: 7)
        var storeOf = (0..<200).map { $0 % Self.stores }
        for step in 0..<60 {
            let id = Int(random.next() * 200)
            let from = storeOf[id]
            let to = step % 3 == 0 ? Int(random.next() * Double(Self.stores)) : from
            let before = store.statistics
            _ = try await store.write { transaction in
                try transaction.collection("items").upsert(Self.item(id, store: to, name: "m\(step)"))
            }
            await store.waitForLiveQueries()
            let after = store.statistics
            let work = after.evaluations + after.incrementalUpdates - before.evaluations - before.incrementalUpdates
            #expect(work <= Set([from, to]).count, "commit \(step) touched \(Set([from, to])); work \(work)")
            // Checked only against the queries of the parameters it touched, not all 20.
            let checks = after.relevanceChecks - before.relevanceChecks
            #expect(checks <= Set([from, to]).count, "commit \(step) touched \(Set([from, to])); checked \(checks)")
            storeOf[id] = to
        }
        await store.waitForLiveQueries()

        // Every observer comes to hold exactly what its own query returns. The engine has offered each its result;
        // a handler runs on its own queue, and may still be on its way (an observer busy with the previous result
        // takes the latest when it returns): a wait for the positive event, with a deadline that catches a delivery
        // that never comes.
        for observer in 0..<(Self.stores * Self.observersPerStore) {
            let own = try await Self.query(items, store: observer % Self.stores).exec().map(\.id)
            do {
                try await eventually { latest.withLock { $0[observer] } == own }
            } catch {
                Issue.record("observer \(observer) holds \(latest.withLock { $0[observer] } ?? []), its query \(own)")
            }
        }
        for liveQuery in liveQueries { await liveQuery.stop() }
    }
}
