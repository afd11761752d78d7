import LiveQueryKit
import Testing
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherTesting

/// While every observer of a query is busy, its changes are held back; once the writer has been quiet for the store's
/// quiet period, the latest result is computed anyway, so that the observer takes it at once when it signals. The
/// quiet period runs on a `ManualTimeSource`: nothing here waits for real time to pass.
@Suite("Live queries: held-back results computed once the writer is quiet")
struct QuietCatchUpTests {
    typealias SlowObserver = HeldBackTests.SlowObserver

    static let quiet = Duration.milliseconds(1)

    static func work(_ statistics: LiveQueryStatistics) -> Int {
        statistics.evaluations + statistics.incrementalUpdates
    }

    /// Advances the clock one quiet period at a time — each time the engine's watch sleeps — until it reports a quiet
    /// catch-up past `before`; returns how many periods that took.
    static func advanceUntilQuietCatchUp(
        _ store: Store, _ clock: ManualTimeSource, after before: Int
    ) async throws -> Int {
        for periods in 1...5 {
            #expect(await clock.waitForSleepers(1), "the engine watches for the writer to go quiet")
            clock.advance(by: quiet)
            // The watch either ended with a catch-up or sleeps again (commits came during the period).
            try await eventually { store.statistics.quietCatchUps > before || clock.sleeperCount > 0 }
            if store.statistics.quietCatchUps > before { return periods }
        }
        Issue.record("no quiet catch-up after 5 quiet periods")
        return 0
    }

    @Test(
        "A burst held back for a busy observer is computed once when the writer goes quiet; the signal takes it as is",
        arguments: TestStores.kinds)
    func computedWhenQuiet(kind: String) async throws {
        let clock = ManualTimeSource()
        let store = try TestStores.make(kind, quietPeriod: Self.quiet, anticipatesSignals: false, timeSource: clock)
        let items = store.collection("items")
        let slow = SlowObserver()
        let liveQuery = try await slow.observeUntilBusy(items.find("group == 'a'").sort("_id"))
        let before = store.statistics
        for index in 0..<30 {
            _ = try await items.upsert(["_id": .string("d\(index % 7)"), "group": "a", "n": .number(Double(index))])
        }
        // The clock has not moved: nothing is computed for a busy observer, however many commits come.
        try await eventually { store.statistics.deferrals > before.deferrals }
        #expect(Self.work(store.statistics) == Self.work(before))

        _ = try await Self.advanceUntilQuietCatchUp(store, clock, after: before.quietCatchUps)
        try await eventually { Self.work(store.statistics) == Self.work(before) + 1 }
        #expect(slow.received.count == 1, "computed, not delivered: the observer has not signalled")

        let final = try await items.find("group == 'a'").sort("_id").exec().map(\.id)
        let computed = store.statistics
        slow.signalNext()
        try await slow.received.wait { $0.count == 2 }
        #expect(slow.received.last == final)
        #expect(Self.work(store.statistics) == Self.work(computed), "the signal took the result computed while quiet")
        #expect(store.statistics.quietCatchUps == computed.quietCatchUps)
        await liveQuery.stop()
    }

    @Test(
        "A commit within the quiet period starts it again; with no quiet period nothing is computed until a signal",
        arguments: TestStores.kinds)
    func quietPeriodRestarts(kind: String) async throws {
        let clock = ManualTimeSource()
        let store = try TestStores.make(kind, quietPeriod: Self.quiet, anticipatesSignals: false, timeSource: clock)
        let items = store.collection("items")
        let slow = SlowObserver()
        let liveQuery = try await slow.observeUntilBusy(items.find("group == 'a'"))
        let before = store.statistics
        _ = try await items.upsert(["_id": "x", "group": "a"])
        #expect(await clock.waitForSleepers(1))
        _ = try await items.upsert(["_id": "y", "group": "a"])  // within the period
        clock.advance(by: Self.quiet)
        // The watch saw a commit during the period: it sleeps again instead of computing.
        try await eventually { clock.sleeperCount == 1 }
        #expect(store.statistics.quietCatchUps == before.quietCatchUps)
        #expect(Self.work(store.statistics) == Self.work(before))
        #expect(try await Self.advanceUntilQuietCatchUp(store, clock, after: before.quietCatchUps) == 1)
        try await eventually { Self.work(store.statistics) == Self.work(before) + 1 }
        await liveQuery.stop()

        let never = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false, timeSource: clock)
        let other = SlowObserver()
        let otherQuery = try await other.observeUntilBusy(never.collection("items").find("group == 'a'"))
        _ = try await never.collection("items").upsert(["_id": "x", "group": "a"])
        try await eventually { never.statistics.deferrals == 1 }
        #expect(clock.sleeperCount == 0, "no quiet period: no watch")
        #expect(never.statistics.incrementalUpdates == 0)
        await otherQuery.stop()
    }
}
