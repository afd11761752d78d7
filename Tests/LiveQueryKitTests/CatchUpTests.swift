import Dispatch
import LiveQueryKit
import SQLiteAdapter
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Every delivery carries the commit it reflects, and a caller can wait for the live queries to catch up with a
/// write — including writes that change no observed result, which deliver nothing.
@Suite("Live queries: commit numbers and catching up with a write", .timeLimit(minutes: 1), .leakChecked)
struct CatchUpTests {
    static func item(_ id: String, group: String = "a") -> JSONValue {
        ["_id": .string(id), "group": .string(group)]
    }

    @Test("Each delivery reflects the commit of the write that produced it", arguments: TestStores.kinds)
    func deliveriesCarryTheirCommit(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let seen = LockedValue<[(ids: [String], commit: UInt64?)]>([])
        let box = LockedValue<LiveQuery?>(nil)
        let liveQuery = try items.find("group == 'a'").sort("_id").observeLocal { documents, _ in
            // Inside the handler, the handle reports the commit of the delivery being handled.
            let commit = box.withLock { $0 }?.deliveredCommit
            seen.withLock { $0.append((documents.map(\.id), commit)) }
        }
        box.withLock { $0 = liveQuery }
        var commits: [UInt64] = []
        for id in ["x", "y", "z"] {
            try await items.upsert(Self.item(id))
            commits.append(store.lastCommit)
            await store.waitForLiveQueries()
            try await eventually { liveQuery.deliveredCommit == store.lastCommit }
        }
        #expect(commits == commits.sorted() && Set(commits).count == 3, "one commit each, in order: \(commits)")
        let deliveries = seen.withLock { $0 }.filter { !$0.ids.isEmpty }
        #expect(deliveries.map(\.ids) == [["x"], ["x", "y"], ["x", "y", "z"]])
        #expect(deliveries.map(\.commit) == commits.map { Optional($0) })
        box.withLock { $0 = nil }
        await liveQuery.stop()
    }

    @Test("snapshots() elements carry their commit", arguments: TestStores.kinds)
    func snapshotsCarryTheirCommit(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await items.upsert(Self.item("x"))
        let first = store.lastCommit
        var iterator = try items.find("group == 'a'").snapshots().makeAsyncIterator()
        let initial = try #require(try await iterator.next())
        #expect(initial.commit >= first)
        try await items.upsert(Self.item("y"))
        let second = store.lastCommit
        let next = try #require(try await iterator.next())
        #expect(next.documents.map(\.id).sorted() == ["x", "y"])
        #expect(next.commit == second)
    }

    @Test("Writes that change no observed result: the wait returns, nothing is delivered", arguments: TestStores.kinds)
    func irrelevantWritesAreCaughtUpWith(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let others = store.collection("others")
        try await items.upsert(Self.item("x"))
        let liveQuery = try items.find("group == 'a'").observeLocal { _, _ in }
        await store.waitForLiveQueries()
        // The lane counts a delivery when it begins; the commit is the handler's, once its queue has called it.
        try await eventually { liveQuery.deliveryStatistics.delivered == 1 && liveQuery.deliveredCommit != nil }
        let initialCommit = try #require(liveQuery.deliveredCommit)
        // Irrelevant in the same collection, and in another collection, interleaved: the change sets the engine
        // sees are not contiguous for the query, which a wait based on the query's own commit would never reach.
        for index in 0..<40 {
            if index.isMultiple(of: 2) {
                try await items.upsert(Self.item("b\(index)", group: "b"))
            } else {
                try await others.upsert(Self.item("o\(index)"))
            }
        }
        let last = store.lastCommit
        await store.waitForLiveQueries(through: last)
        #expect(store.statistics.caughtUpCommit >= last)
        let statistics = liveQuery.deliveryStatistics
        #expect(statistics.submitted == 1, "no result was offered for writes that cannot change it")
        #expect(statistics.delivered == 1)
        #expect(liveQuery.deliveredCommit == initialCommit)
        await liveQuery.stop()
    }

    @Test(
        "An observer added before the wait has been offered its first result when it returns",
        arguments: TestStores.kinds)
    func newObserversAreStartedBeforeTheWaitReturns(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await items.upsert(Self.item("x"))
        let queue = DispatchQueue(label: "suspended")
        queue.suspend()
        let liveQuery = try items.find("group == 'a'").observeLocal(deliverOn: queue) { _, _ in }
        await store.waitForLiveQueries()
        #expect(liveQuery.deliveryStatistics.submitted == 1)
        queue.resume()
        await liveQuery.stop()
    }

    @Test("The wait returns at once with nothing observed, and for a closed store", arguments: TestStores.kinds)
    func nothingToWaitFor(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await items.upsert(Self.item("x"))
        await store.waitForLiveQueries(through: store.lastCommit + 1_000)  // nothing observed
        let liveQuery = try items.find("group == 'a'").observeLocal { _, _ in }
        await store.waitForLiveQueries()
        if let sqlite = store.documents as? SQLiteDocumentStore {
            try sqlite.close()
            await store.waitForLiveQueries(through: store.lastCommit + 1_000)  // closed: no commit will come
        }
        await liveQuery.stop()
    }

    @Test("A wait for a commit that never comes ends when its task is cancelled")
    func cancelledWaitReturns() async throws {
        let store = Store.inMemory()
        let items = store.collection("items")
        let liveQuery = try items.find("group == 'a'").observeLocal { _, _ in }
        let returned = LockedValue(false)
        let waiter = Task {
            await store.waitForLiveQueries(through: store.lastCommit + 1_000)
            returned.withLock { $0 = true }
        }
        // A later event that must come after the waiter is registered: the engine has caught up with everything
        // so far, so a second waiter for the current commit returns, while the first still waits.
        await store.waitForLiveQueries()
        #expect(!returned.withLock { $0 })
        waiter.cancel()
        await waiter.value
        #expect(returned.withLock { $0 })
        await liveQuery.stop()
    }

    @Test(
        "A fast writer: at most one round per commit, and every commit is caught up with",
        arguments: TestStores.kinds)
    func fastWriterIsCaughtUpWith(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let liveQuery = try items.find("group == 'a'").observeLocal { _, _ in }
        let writes = 300
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<3 {
                group.addTask {
                    for index in 0..<(writes / 3) { try await items.upsert(Self.item("w\(writer)-\(index)")) }
                }
            }
            try await group.waitForAll()
        }
        await store.waitForLiveQueries()
        try await eventually { liveQuery.deliveredCommit == store.lastCommit }
        let statistics = store.statistics
        #expect(statistics.caughtUpCommit == store.lastCommit)
        // At most one round per commit, plus the observer's start, plus one per change set held back while the
        // observer was busy (a round that brings the query up to date when it is ready, before any next commit).
        #expect(statistics.rounds <= writes + 1 + statistics.deferrals)
        await liveQuery.stop()
    }
}
