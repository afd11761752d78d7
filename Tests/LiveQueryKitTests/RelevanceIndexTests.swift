import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting

/// A commit's changed documents are checked only against the queries they can reach: those filed under the value a
/// document has at the path their predicate requires to equal something, those whose result holds a changed
/// document, and those with nothing to file them by. Each step also checks every result against the query run anew.
@Suite("Live queries: which queries a commit is checked against")
struct RelevanceIndexTests {
    /// One observer per query, each noting its latest result's `_id`s.
    final class Observers: Sendable {
        let latest = LockedValue<[String: [String]]>([:])
        private let queries: [(text: String, query: PendingQuery)]
        private let liveQueries: LockedValue<[LiveQuery]> = LockedValue([])

        init(_ items: StoreCollection, _ texts: [String]) throws {
            queries = texts.map { ($0, items.find($0).sort("_id")) }
            for (text, query) in queries {
                let liveQuery = try query.observeLocal { [latest] documents, _ in
                    latest.withLock { $0[text] = documents.map(\.id) }
                }
                liveQueries.withLock { $0.append(liveQuery) }
            }
        }

        /// Every observer comes to hold what its query returns now.
        func expectCurrent(_ step: String) async throws {
            for (text, query) in queries {
                let own = try await query.exec().map(\.id)
                do {
                    try await eventually { self.latest.withLock { $0[text] } == own }
                } catch {
                    Issue.record("\(step): '\(text)' holds \(latest.withLock { $0[text] } ?? []), its query \(own)")
                }
            }
        }

        func stop() async {
            for liveQuery in liveQueries.withLock({ $0 }) { await liveQuery.stop() }
        }
    }

    /// Commits a document and returns how many queries its changes were checked against: `checks(document)`.
    struct Checks {
        let store: Store
        let items: StoreCollection

        func callAsFunction(_ document: JSONValue) async throws -> Int {
            let before = store.statistics.relevanceChecks
            _ = try await items.upsert(document)
            await store.waitForLiveQueries()
            return store.statistics.relevanceChecks - before
        }
    }

    @Test(
        "Equalities, IN and an equality inside && file a query by value; a document leaving a result reaches it; a query with no equality is reached by every commit",
        arguments: TestStores.kinds)
    func reached(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let observers = try Observers(
            items,
            [
                "group == 'a'", "group == 'b'", "group IN ['c', 'd']", "group == 'e' && n > 3", "n > 100",
                "tags.kind == 'x'",
            ])
        await store.waitForLiveQueries()
        try await observers.expectCurrent("first results")

        let checks = Checks(store: store, items: items)

        // By value: `group == 'a'`, and `n > 100`, which has no equality.
        #expect(try await checks(["_id": "x", "group": "a", "n": 1]) == 2)
        try await observers.expectCurrent("x into a")
        // Leaving `group == 'a'`, whose result holds it, for `IN ['c', 'd']`.
        #expect(try await checks(["_id": "x", "group": "d", "n": 1]) == 3)
        try await observers.expectCurrent("x from a to d")
        // Leaving the `IN` for a group no query names.
        #expect(try await checks(["_id": "x", "group": "z", "n": 1]) == 2)
        try await observers.expectCurrent("x from d to z")
        // The equality inside `&&` files it; its other term is checked exactly.
        #expect(try await checks(["_id": "y", "group": "e", "n": 1]) == 2)
        #expect(try await checks(["_id": "y", "group": "e", "n": 5]) == 2)
        try await observers.expectCurrent("y in e")
        // A nested path, and a number that matches the query with no equality.
        #expect(try await checks(["_id": "w", "tags": ["kind": "x"], "n": 200]) == 2)
        try await observers.expectCurrent("w")
        // A document whose group is an array or missing equals no literal: only `n > 100` is checked.
        #expect(try await checks(["_id": "v", "group": ["a"], "n": 1]) == 1)
        #expect(try await checks(["_id": "u", "n": 1]) == 1)
        try await observers.expectCurrent("u and v")
        let before = store.statistics.relevanceChecks
        try await items.remove(id: "x")
        await store.waitForLiveQueries()
        #expect(store.statistics.relevanceChecks - before == 1, "a removal reaches only the results holding it")
        try await observers.expectCurrent("x removed")
        await observers.stop()
    }

    @Test(
        "Queries of one shape that share a value and differ in another are filed under the one they do not share, in either order of observing",
        arguments: TestStores.kinds)
    func sharedValue(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let texts = (0..<20).map { "type == 'item' && store == 's\($0)'" } + ["type == 'item'"]
        let observers = try Observers(items, texts)
        await store.waitForLiveQueries()

        let checks = Checks(store: store, items: items)

        // Its own store's query and the query of every item; not the nineteen others, which share `type`.
        #expect(try await checks(["_id": "a", "type": "item", "store": "s3"]) == 2)
        #expect(try await checks(["_id": "b", "type": "item", "store": "s0"]) == 2)
        // A store no query names: only the query of every item.
        #expect(try await checks(["_id": "c", "type": "item", "store": "s99"]) == 1)
        // Another type in a named store: that store's query, checked exactly and left alone.
        #expect(try await checks(["_id": "d", "type": "note", "store": "s5"]) == 1)
        try await observers.expectCurrent("items in stores")
        await observers.stop()

        // Observed again, in the other order: the query of every item comes first and keeps `type` to itself.
        let again = try Observers(items, texts.reversed())
        await store.waitForLiveQueries()
        #expect(try await checks(["_id": "e", "type": "item", "store": "s7"]) == 2)
        try await again.expectCurrent("observed again")
        await again.stop()
    }

    @Test(
        "Numbers compare by value: 1 and 1.0 reach the same query, and -0 the query of 0", arguments: TestStores.kinds)
    func numbers(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let observers = try Observers(items, ["n == 1", "n == 0"])
        await store.waitForLiveQueries()
        _ = try await items.upsert(["_id": "a", "n": 1.0])
        _ = try await items.upsert(["_id": "b", "n": .number(-0.0)])
        await store.waitForLiveQueries()
        try await observers.expectCurrent("numbers")
        await observers.stop()
    }

    @Test(
        "A query whose changes are held back for a busy observer is reached by every change: a document that came in while held and left again is not in the result its signal takes",
        arguments: TestStores.kinds)
    func heldBack(kind: String) async throws {
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let items = store.collection("items")
        _ = try await items.upsert(["_id": "a1", "group": "a"])
        let slow = HeldBackTests.SlowObserver()
        let liveQuery = try await slow.observeUntilBusy(items.find("group == 'a'").sort("_id"))
        // A second query, never busy, so that every commit runs a round (were every query held back, commits would
        // only be kept until a signal).
        let other = LockedValue<[String]>([])
        let otherQuery = try items.find("group == 'z'").observeLocal(deliverOn: .inline) { documents, _ in
            other.withLock { $0 = documents.map(\.id) }
        }
        await store.waitForLiveQueries()
        // In while the observer is busy: held back, so the result's `_id`s do not hold it (no wait to catch up
        // here: that would compute the held-back result).
        let deferrals = store.statistics.deferrals
        _ = try await items.upsert(["_id": "d", "group": "a"])
        try await eventually { store.statistics.deferrals > deferrals }
        let before = store.statistics.relevanceChecks
        // Out again, to a group no query names: only the query's held-back changes say it may be in the result.
        _ = try await items.upsert(["_id": "d", "group": "b"])
        // A later commit that the other query shows: its round comes after the one above.
        _ = try await items.upsert(["_id": "z1", "group": "z"])
        try await eventually { other.withLock { $0 } == ["z1"] }
        #expect(
            store.statistics.relevanceChecks - before == 3,
            "the held-back query at both commits, the other query at the second")
        // The latest result is the one the observer holds: its signal delivers nothing (were `d` still in it, the
        // signal would deliver that). The next result it receives is the next commit's.
        let received = slow.received.count
        slow.signalNext()
        _ = try await items.upsert(["_id": "a2", "group": "a"])
        try await slow.received.wait { $0.count == received + 1 }
        #expect(slow.received.last == ["a1", "a2"])
        await liveQuery.stop()
        await otherQuery.stop()
    }

    @Test(
        "A failed query runs again at the next commit, whatever value the commit's document has",
        arguments: TestStores.kinds)
    func failing(kind: String) async throws {
        let (store, faulty) = try FailureTests.faultyStore(kind)
        let items = store.collection("items")
        try await items.upsert(["_id": "a", "group": "a"])
        let recording = try FailureTests.Recording(items.find("group == 'a'").sort("_id"))
        try await recording.received.wait { $0.last == ["a"] }
        faulty.faults.readFailure = 1
        try await items.upsert(["_id": "a2", "group": "a"])  // reaches the query, whose read fails
        try await eventually { recording.errors.count == 1 }
        faulty.faults.readFailure = 0
        // Another group's document: it reaches the query only because the query is failing.
        try await items.upsert(["_id": "b", "group": "b"])
        try await recording.received.wait { $0.last == ["a", "a2"] }
        await recording.liveQuery.stop()
    }
}
