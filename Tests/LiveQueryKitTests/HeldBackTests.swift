import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting

/// Under next-signal the store keeps committing, and the engine does no work for a query whose every observer is
/// busy with an earlier result: the changes are held back and applied once, when an observer signals — which then
/// gets the latest result, once. (The stores here have no quiet period and compute nothing ahead of a signal: see
/// `QuietCatchUpTests` and `ComputeAheadTests` for those.)
@Suite("Live queries: changes held back while every observer is busy")
struct HeldBackTests {
    /// A next-signal observer that keeps its signal until the test calls it.
    final class SlowObserver: Sendable {
        let received = Received()
        /// The documents of each result received, in order.
        let results = LockedValue<[[Document]]>([])
        let signal = LockedValue<SignalNext?>(nil)

        func observe(_ query: PendingQuery) throws -> LiveQuery {
            try query.observeLocalWithNextSignal { [self] documents, event, signalNext in
                // Before `received`, which tests wait on: once it counts a result, `results` has it.
                results.withLock { $0.append(documents) }
                received.append(documents, event)
                signal.withLock { $0 = signalNext }
            }
        }

        /// Observes `query` and returns once the first result is handled and its signal kept: the observer is busy.
        func observeUntilBusy(_ query: PendingQuery) async throws -> LiveQuery {
            let liveQuery = try observe(query)
            try await eventually { self.isHoldingSignal }
            return liveQuery
        }

        func signalNext() { signal.withLock { $0.take() }?() }

        /// Signals, and returns the ids of the one result that signal brings.
        func signalAndReceive() async throws -> [String]? {
            let count = received.count
            signalNext()
            try await received.wait { $0.count == count + 1 }
            return received.last
        }

        var isHoldingSignal: Bool { signal.withLock { $0 != nil } }
    }

    @Test(
        "A busy observer costs no evaluation per commit: waiting to catch up computes the latest once, its signal takes it",
        arguments: TestStores.kinds)
    func heldBackThenLatestOnce(kind: String) async throws {
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let items = store.collection("items")
        let slow = SlowObserver()
        let liveQuery = try await slow.observeUntilBusy(items.find("group == 'a'").sort("_id"))
        let before = store.statistics
        for index in 0..<50 {
            _ = try await items.upsert(["_id": .string("d\(index % 7)"), "group": "a", "n": .number(Double(index))])
        }
        let work = { (statistics: LiveQueryStatistics) in statistics.evaluations + statistics.incrementalUpdates }
        // Held back while the observer is busy — and brought up to date once, for the wait, without its signal.
        await store.waitForLiveQueries()
        let held = store.statistics
        #expect(held.deferrals > 0)
        #expect(work(held) - work(before) == 1, "one result for 50 commits, from every held-back change: \(held)")
        // Computed while the observer was busy: staged in its lane, delivered nothing more until it signals.
        #expect(liveQuery.deliveryStatistics.submitted == 2 && liveQuery.deliveryStatistics.delivered == 1)
        #expect(slow.received.count == 1, "nothing more until it signals")
        #expect(store.inspect().liveQueries.first?.observers.first?.waiting?.documents == 7)

        let final = try await items.find("group == 'a'").sort("_id").exec().map(\.id)
        #expect(try await slow.signalAndReceive() == final)
        #expect(work(store.statistics) == work(held), "the signal takes the result computed for the wait")
        #expect(liveQuery.deliveryStatistics.submitted == 2, "from its lane: nothing submitted at the signal")
        // Nothing more was owed: signalling again delivers nothing, whatever comes after it.
        slow.signalNext()
        _ = try await items.upsert(["_id": "z", "group": "b"])
        await store.waitForLiveQueries()
        #expect(slow.received.count == 2)
        await liveQuery.stop()
    }

    /// Commits made while the observer is busy: each is merged into those kept before it as it comes (a merged set
    /// keeps each document once, as the last commit left it).
    struct LongHold: Sendable, CustomTestStringConvertible {
        let commits: Int
        let documentsPerCommit: Int
        var testDescription: String { "\(commits) commits of \(documentsPerCommit)" }
    }

    @Test(
        "A long hold: kept commits are merged as they come, and nothing is woken or computed until the signal",
        arguments: TestStores.kinds,
        [
            LongHold(commits: 1_000, documentsPerCommit: 1),
            // Kept one set per commit, these would hold 12,000 documents: merged, 300.
            LongHold(commits: 40, documentsPerCommit: 300),
        ])
    func longHold(kind: String, hold: LongHold) async throws {
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let query = store.collection("items").find("group == 'a'").sort("_id")
        let slow = SlowObserver()
        let liveQuery = try await slow.observeUntilBusy(query)
        await store.waitForLiveQueries()
        let before = store.statistics
        // The writer merges each commit's set into the kept one under the engine's lock: no round of the engine's
        // consumer is needed to keep memory flat.
        for commit in 0..<hold.commits {
            _ = try await store.write { transaction in
                for index in 0..<hold.documentsPerCommit {
                    let id = hold.documentsPerCommit == 1 ? commit % 7 : index
                    try transaction.collection("items").upsert([
                        "_id": .string("d\(id)"), "group": "a", "n": .number(Double(commit)),
                    ])
                }
            }
        }
        let kept = store.statistics
        let work = { (statistics: LiveQueryStatistics) in statistics.evaluations + statistics.incrementalUpdates }
        #expect(kept.rounds == before.rounds, "no round woken while the observer is busy: \(kept)")
        #expect(kept.deferrals - before.deferrals == hold.commits, "every commit kept")
        #expect(work(kept) == work(before), "and nothing computed")
        #expect(slow.received.count == 1)

        // The wait brings the held query up to date with every commit; the signal takes that result.
        await store.waitForLiveQueries()
        let final = try await query.exec()
        #expect(final.contains { $0.int("n") == hold.commits - 1 }, "the final state has the last commit")
        slow.signalNext()
        try await slow.received.wait { $0.count == 2 }
        #expect(slow.results.withLock { $0.last } == final, "the latest result, from every kept commit")
        await liveQuery.stop()
    }

    @Test(
        "One busy observer and one free: the free one gets every result, the busy one the latest when it signals",
        arguments: TestStores.kinds)
    func busyBesideFree(kind: String) async throws {
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let items = store.collection("items")
        let query = items.find("group == 'a'").sort("_id")
        let slow = SlowObserver()
        let slowQuery = try slow.observe(query)
        let free = Received()
        // Called inline, in the engine's round: free again before the round ends, whatever the threads' timing.
        let freeQuery = try query.observeLocal(deliverOn: .inline) { free.append($0, $1) }
        try await eventually { slow.isHoldingSignal && free.count == 1 }
        for index in 0..<5 {
            _ = try await items.upsert(["_id": .string("d\(index)"), "group": "a"])
            await store.waitForLiveQueries()
        }
        try await free.wait { $0.last == ["d0", "d1", "d2", "d3", "d4"] }
        #expect(store.statistics.deferrals == 0, "a free observer needs every result")
        #expect(try await slow.signalAndReceive() == ["d0", "d1", "d2", "d3", "d4"])
        await slowQuery.stop()
        await freeQuery.stop()
    }

    @Test(
        "Held back from the hand-out: later commits run no round, and an observer behind takes the result they bring",
        arguments: TestStores.kinds)
    func heldFromTheHandOut(kind: String) async throws {
        let (store, items, behind, stop) = try await Self.oneBehindOneAhead(kind)
        await store.waitForLiveQueries()  // the round that handed the ahead observer its result has ended
        let before = store.statistics
        // Every observer busy since that hand-out: the commits are only kept, each counted as held back.
        _ = try await items.upsert(["_id": "a2", "group": "a"])
        _ = try await items.upsert(["_id": "a3", "group": "b"])
        #expect(store.statistics.rounds == before.rounds, "no round, no wake-up of the engine's thread")
        #expect(store.statistics.deferrals == before.deferrals + 2)
        #expect(store.inspect().liveQueries.map(\.isHeldBack) == [true], "an inspector sees the query held back")
        // The behind observer has not taken ["a0", "a1"]; signalling, it gets what the kept commits bring instead.
        #expect(
            try await behind.signalAndReceive() == ["a0", "a1", "a2"],
            "not the result published before the kept commits")
        await store.waitForLiveQueries()
        #expect(store.statistics.rounds == before.rounds + 1, "one round for both commits")
        await stop()
    }

    /// Two busy observers of one query over `a0`: `behind` holds the first result, `ahead` took the second
    /// (`a0`, `a1`). Returns them with what ends both.
    static func oneBehindOneAhead(_ kind: String) async throws -> (
        Store, StoreCollection, behind: SlowObserver, stop: () async -> Void
    ) {
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let items = store.collection("items")
        _ = try await items.upsert(["_id": "a0", "group": "a"])
        let query = items.find("group == 'a'").sort("_id")
        let behind = SlowObserver()
        let ahead = SlowObserver()
        let behindQuery = try await behind.observeUntilBusy(query)
        let aheadQuery = try await ahead.observeUntilBusy(query)
        // The ahead observer takes the next result; the behind one is still busy with the first.
        ahead.signalNext()
        _ = try await items.upsert(["_id": "a1", "group": "a"])
        try await ahead.received.wait { $0.count == 2 && $0.last == ["a0", "a1"] }
        try await eventually { ahead.isHoldingSignal }
        return (
            store, items, behind,
            { [behindQuery, aheadQuery] in
                await behindQuery.stop()
                await aheadQuery.stop()
            }
        )
    }

    @Test(
        "An observer behind the latest result, woken by held-back changes that alter nothing, still gets that result",
        arguments: TestStores.kinds)
    func behindThenHeldChangesAlterNothing(kind: String) async throws {
        let (store, items, behind, stop) = try await Self.oneBehindOneAhead(kind)
        // Both busy: a change that could alter the result is held back; the next undoes it (and, every query held
        // back, waits in the inbox).
        _ = try await items.upsert(["_id": "b1", "group": "a"])
        try await eventually { store.statistics.deferrals == 1 }
        _ = try await items.upsert(["_id": "b1", "group": "b"])
        // Signalling, the behind observer wakes the query: the held-back changes together alter nothing, and it
        // gets the result it had not taken.
        #expect(try await behind.signalAndReceive() == ["a0", "a1"])
        await stop()
    }

    @Test(
        "More held-back changes than the engine reads one by one: the query runs once, counted as many changes, and ends right",
        arguments: TestStores.kinds)
    func manyHeldBack(kind: String) async throws {
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let items = store.collection("items")
        let slow = SlowObserver()
        let liveQuery = try await slow.observeUntilBusy(items.find("group == 'a'").sort("_id").limit(3))
        let before = store.statistics
        for batch in 0..<3 {
            try await store.write { transaction in
                for index in 0..<200 {
                    try transaction.collection("items").upsert(["_id": .string("d\(batch)-\(index)"), "group": "a"])
                }
            }
        }
        await store.waitForLiveQueries()
        slow.signalNext()
        try await slow.received.wait { $0.last == ["d0-0", "d0-1", "d0-10"] }
        let statistics = store.statistics
        #expect(statistics.deferrals > before.deferrals, "held back while the observer was busy")
        #expect(statistics.evaluations - before.evaluations == 1)
        // 600 held back together, none of the commits past the limit alone: the rerun's reason is still theirs.
        #expect(statistics.reruns.manyChanges - before.reruns.manyChanges == 1, "\(statistics.reruns)")
        #expect(statistics.reruns.total - before.reruns.total == 1)
        await liveQuery.stop()
    }

    @Test(
        "An owner dies while its observer is busy and every query is held back: commits go on, and a few of them release the observer",
        arguments: TestStores.kinds)
    func ownerDiesWhileHeldBack(kind: String) async throws {
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let items = store.collection("items")
        let kept = LockedValue<SignalNext?>(nil)
        var owner: Owner? = Owner()
        try items.find("group == 'a'").observeLocalWithNextSignal(owner: owner!) { _, _, signalNext in
            kept.withLock { $0 = signalNext }  // never called: busy for good
        }
        try await eventually { kept.withLock { $0 != nil } }
        await store.waitForLiveQueries()  // the round that started it, and looked at the whole table, has ended
        let rounds = store.statistics.rounds
        // A change while its only observer is busy with the result it was handed: held back, like every query here,
        // kept without a round (the writer's thread counts it before the commit returns).
        _ = try await items.upsert(["_id": "1", "group": "a"])
        #expect(store.statistics.deferrals == 1)
        #expect(store.statistics.rounds == rounds, "kept in the inbox: no round, no wake-up of the engine")
        owner = nil
        // No signal will come, and waitForLiveQueries would wake the query: only commits reach the engine.
        for index in 0..<16 { _ = try await items.upsert(["_id": .string("x\(index)"), "group": "b"]) }
        try await eventually { store.statistics.observers == 0 }
        #expect(store.statistics.queries == 0)
        withExtendedLifetime(owner) {}
    }

    @Test(
        "An owner dies while every query is held back and the engine is busy with a round: the check's finding waits for the round after",
        arguments: TestStores.kinds)
    func ownerFoundDeadDuringARound(kind: String) async throws {
        let documents = GatedDocumentStore(base: try TestStores.documents(kind))
        let store = Store(documents, configuration: .init(anticipatesSignals: false))
        let items = store.collection("items")
        let busy = LockedValue(0)
        var owner: Owner? = Owner()
        let survivor = Owner()
        try items.find("group == 'a'").observeLocalWithNextSignal(owner: owner!) { _, _, _ in
            busy.withLock { $0 += 1 }  // never signals
        }
        try await eventually { busy.withLock { $0 } == 1 }
        await store.waitForLiveQueries()  // every query held back
        // A new observer's round is held at its read; meanwhile the first observer's owner dies, and sixteen commits
        // are kept, the last of which checks and finds it. The round then ends with every query held back again.
        let gate = documents.holdNextRead()
        try items.find("group == 'b'").observeLocalWithNextSignal(owner: survivor) { _, _, _ in
            busy.withLock { $0 += 1 }  // never signals either
        }
        try await eventually { gate.isReached }
        owner = nil
        for index in 0..<16 { _ = try await items.upsert(["_id": .string("x\(index)"), "group": "c"]) }
        gate.open()
        try await eventually { busy.withLock { $0 } == 2 }
        try await eventually { store.statistics.observers == 1 }
        withExtendedLifetime(owner) {}
    }
}
