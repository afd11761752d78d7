import LiveQueryKit
import Testing
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Six hundred owner-tied observers over a hundred queries: their first results take a fair share of the processor
/// (a hundred evaluations on a two-core machine), so the suite never runs beside the stress tests that load every
/// core on purpose.
@Suite("Observing: owners dying by the hundred", .needsProcessorTime, .timeLimit(minutes: 5), .leakChecked)
struct ManyOwnersTests {
    /// Six hundred owner-tied observers over a hundred queries (`n == 0` … `n == 99`), six each; returns their owners
    /// once every observer has had its first result and every handler call has returned. (Their handlers run in the
    /// engine's round: an owner that died while a call held it would be released by that call as it returned, not by
    /// a sweep.) Correctness deadlines, not speed: the engine runs on a queue of its own, so other tests holding
    /// Swift concurrency's threads do not slow it (see Testing.md).
    static func observeSixHundred(_ store: Store) async throws -> [ObservationTests.Owner] {
        let items = store.collection("items")
        let received = LockedValue(0)
        let owners = (0..<600).map { _ in ObservationTests.Owner() }
        for (index, owner) in owners.enumerated() {
            try items.find("n == \(index % 100)").observeLocal(owner: owner, deliverOn: .inline) { _, _ in
                received.withLock { $0 += 1 }
            }
        }
        try await eventually(within: .seconds(30)) { received.withLock { $0 } >= 600 }
        await store.waitForLiveQueries()  // the round that called them has ended
        return owners
    }

    @Test(
        "Owners dying by the hundred: one commit after they died releases every observer — more than one round's sweep — with no commit after",
        arguments: TestStores.kinds)
    func manyOwnersDieAtOnce(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        var owners = try await Self.observeSixHundred(store)
        #expect(store.statistics.observers == 600)
        owners.removeAll()
        try await items.upsert(["_id": "after", "n": 1])
        // Nothing is committed from here on: once the writer has paused, the engine sweeps until every observer has
        // been looked at.
        try await eventually(within: .seconds(30)) { store.statistics.observers == 0 }
        withExtendedLifetime(owners) {}
    }

    @Test(
        "Owners dying by the hundred and no commit after: the observers started next release them, before as many have started as the table held",
        arguments: TestStores.kinds)
    func releasedAsObserversStart(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        var owners = try await Self.observeSixHundred(store)
        owners.removeAll()
        // Nothing is committed, and the new observers' queries are the dead ones' (a start hands out to the new
        // observer alone): only the table's sweep, counted by its additions, finds the dead owners. The rounds that
        // start the new observers check none themselves.
        let staying = ObservationTests.Owner()
        for index in 0..<600 {
            try items.find("n == \(index % 100)").observeLocal(owner: staying, deliverOn: .inline) { _, _ in }
        }
        try await eventually(within: .seconds(30)) { store.statistics.observers == 600 }
        #expect(store.statistics.observers == 600)
        withExtendedLifetime((owners, staying)) {}
    }

    @Test(
        "While the writer commits, each round checks only its share of the observers for dead owners; the rest once the writer pauses",
        arguments: TestStores.kinds)
    func sweptOnceTheWriterPauses(kind: String) async throws {
        let clock = ManualTimeSource()
        let store = try TestStores.make(kind, timeSource: clock)
        let items = store.collection("items")
        var owners = try await Self.observeSixHundred(store)
        owners.removeAll()
        // Commits that no query's result takes: no delivery looks at an observer, only the rounds' sweeps do. The
        // clock stands still, so the writer never pauses: each round releases its 128, and no round only sweeps.
        _ = try await items.upsert(["_id": "a", "n": 1_000])
        await store.waitForLiveQueries()
        #expect(store.statistics.observers == 600 - 128)
        _ = try await items.upsert(["_id": "b", "n": 1_000])
        await store.waitForLiveQueries()
        #expect(store.statistics.observers == 600 - 2 * 128)
        // The writer pauses: once a quiet period passes without a commit (the first saw the second commit come),
        // rounds that only sweep release the rest.
        for _ in 0..<5 {
            #expect(await clock.waitForSleepers(1), "the engine watches for the writer to pause")
            clock.advance(by: .milliseconds(20))
            try await eventually { store.statistics.observers == 0 || clock.sleeperCount > 0 }
            if store.statistics.observers == 0 { break }
        }
        #expect(store.statistics.observers == 0)
        withExtendedLifetime(owners) {}
    }

    @Test(
        "Every query held back, owners dead: the commits kept before rounds that only sweep still count toward the check that releases the rest",
        arguments: TestStores.kinds)
    func checkCountsAcrossSweepingRounds(kind: String) async throws {
        let clock = ManualTimeSource()
        let store = try TestStores.make(kind, anticipatesSignals: false, timeSource: clock)
        let items = store.collection("items")
        // Two rounds' share of observers, each busy for good with its first result: the query is held back.
        let received = LockedValue(0)
        let count = 2 * 128
        var owners = (0..<count).map { _ in ObservationTests.Owner() }
        for owner in owners {
            try items.find("group == 'a'").observeLocalWithNextSignal(owner: owner) { _, _, _ in
                received.withLock { $0 += 1 }
            }
        }
        try await eventually { received.withLock { $0 } == count }
        await store.waitForLiveQueries()
        let rounds = store.statistics.rounds
        _ = try await items.upsert(["_id": "kept", "group": "b"])
        #expect(store.statistics.rounds == rounds, "every query held back: the commit is kept without a round")
        // A round that takes the kept commit looks at one half of the table, owners alive, and leaves the other half
        // to rounds that only sweep once the writer pauses. Then every owner dies.
        await store.waitForLiveQueries()
        owners.removeAll()
        for index in 0..<10 { _ = try await items.upsert(["_id": .string("before \(index)"), "group": "b"]) }
        // The writer pauses: the first quiet period saw the commits come, the second passes, and a round that only
        // sweeps releases the half not yet looked at.
        for _ in 0..<5 where store.statistics.observers > 128 {
            #expect(await clock.waitForSleepers(1), "the engine watches for the writer to pause")
            clock.advance(by: .milliseconds(20))
            try await eventually { store.statistics.observers == 128 || clock.sleeperCount > 0 }
        }
        #expect(store.statistics.observers == 128, "the half looked at while its owners lived is left")
        // Sixteen commits kept since the last round that took any: the check finds the dead owners, and a round
        // releases them.
        for index in 0..<6 { _ = try await items.upsert(["_id": .string("after \(index)"), "group": "b"]) }
        try await eventually { store.statistics.observers == 0 }
        withExtendedLifetime(owners) {}
    }
}
