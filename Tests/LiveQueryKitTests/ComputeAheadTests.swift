import Dispatch
import DocumentStoreKit
import Testing
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherTesting

@testable import LiveQueryKit

/// While every observer of a query is busy, its changes are held back; a little before the observer is due to signal
/// — timed by how long it took over its last result — the engine computes the latest result, so that the signal takes
/// it at once. The handling times run on a `ManualTimeSource`: nothing here waits for real time to pass.
@Suite("Live queries: a held-back result computed just before a busy observer is due to signal")
struct ComputeAheadTests {
    typealias SlowObserver = HeldBackTests.SlowObserver

    /// How long the observer takes over a result, on the manual clock.
    static let handling = Duration.milliseconds(10)
    /// When the computation is due after a hand-out: the handling time less a quarter of it, at most 1 ms.
    static let due = Duration.milliseconds(9)

    static func work(_ statistics: LiveQueryStatistics) -> Int {
        statistics.evaluations + statistics.incrementalUpdates
    }

    /// A store on a manual clock whose observer took ``handling`` over its first result, was handed its second just
    /// now, and keeps its signal: the engine has measured it, and the first commit held back schedules a computation
    /// ``due`` from the hand-out.
    final class Paced: Sendable {
        let clock: ManualTimeSource
        let store: Store
        let items: StoreCollection
        let query: PendingQuery
        let slow = SlowObserver()
        let liveQuery: LiveQuery

        init(_ kind: String) async throws {
            clock = ManualTimeSource()
            store = try TestStores.make(kind, timeSource: clock)
            items = store.collection("items")
            query = items.find("group == 'a'").sort("_id")
            _ = try await items.upsert(["_id": "d0", "group": "a"])
            liveQuery = try await slow.observeUntilBusy(query)
            #expect(clock.sleeperCount == 0, "nothing is scheduled before a handling time is known")
            clock.advance(by: ComputeAheadTests.handling)
            let before = store.statistics
            _ = try await items.upsert(["_id": "d1", "group": "a"])
            try await eventually { store.statistics.deferrals > before.deferrals }
            slow.signalNext()  // after 10 ms: the held-back change is applied, the second result handed out
            try await slow.received.wait { $0.count == 2 }
            try await eventually { slow.isHoldingSignal }
        }

        /// Commits to the observed group while the observer is busy: held back.
        func commit(_ ids: [String]) async throws {
            let before = store.statistics
            for id in ids { _ = try await items.upsert(["_id": .string(id), "group": "a"]) }
            try await eventually { store.statistics.deferrals > before.deferrals }
        }

        /// The first commit held back after the hand-out: the round that holds it back schedules the computation.
        func commitScheduling(_ id: String) async throws {
            try await commit([id])
            #expect(await clock.waitForSleepers(1), "the round that held a commit back scheduled the computation")
        }

        /// Advances the clock to the computation's due time; returns once it has computed the latest result.
        func advanceToComputation() async throws {
            #expect(await clock.waitForSleepers(1), "the round that held a commit back scheduled the computation")
            let before = store.statistics
            clock.advance(by: ComputeAheadTests.due - .milliseconds(1))
            #expect(clock.sleeperCount == 1, "not yet due")
            #expect(store.statistics.computedAhead == before.computedAhead)
            clock.advance(by: .milliseconds(1))
            try await eventually {
                store.statistics.computedAhead == before.computedAhead + 1
                    && ComputeAheadTests.work(store.statistics) == ComputeAheadTests.work(before) + 1
            }
        }

        /// Signals, and waits for the result the signal brings: the query's result as of now. Returns the results the
        /// engine computed from the signal on (0: the signal took one computed ahead).
        func signalForTheLatest() async throws -> Int {
            let latest = try await query.exec().map(\.id)
            let before = store.statistics
            slow.signalNext()
            try await slow.received.wait { $0.count == 3 }
            #expect(slow.received.last == latest)
            return ComputeAheadTests.work(store.statistics) - ComputeAheadTests.work(before)
        }

        func end() async {
            await liveQuery.stop()
            clock.advance(by: .seconds(1))  // ends any computation still scheduled
        }
    }

    @Test(
        "Held-back commits are computed just before the signal is due; the signal takes that result as is",
        arguments: TestStores.kinds)
    func computedBeforeTheSignal(kind: String) async throws {
        let paced = try await Paced(kind)
        try await paced.commit(["d2", "d3", "d4"])
        try await paced.advanceToComputation()
        #expect(paced.slow.received.count == 2, "computed, not delivered: the observer has not signalled")
        #expect(try await paced.signalForTheLatest() == 0, "the signal took the result computed ahead")
        await paced.end()
    }

    @Test(
        "A commit after the computation ahead is not lost: the signal waits for the latest result, computed then",
        arguments: TestStores.kinds)
    func commitAfterTheComputation(kind: String) async throws {
        let paced = try await Paced(kind)
        try await paced.commit(["d2"])
        try await paced.advanceToComputation()
        try await paced.commit(["d9"])
        #expect(try await paced.query.exec().map(\.id).contains("d9"))
        #expect(try await paced.signalForTheLatest() == 1, "not the result computed ahead: it lacks d9")
        await paced.end()
    }

    @Test(
        "A writer still committing when the computation ahead is due: none is made; the signal computes the latest, once",
        arguments: TestStores.kinds)
    func writerStillCommitting(kind: String) async throws {
        let paced = try await Paced(kind)
        try await paced.commitScheduling("d2")
        paced.clock.advance(by: Self.due - .microseconds(100))
        let before = paced.store.statistics
        try await paced.commit(["d3"])  // 0.1 ms before the computation is due: within the writer's active window
        paced.clock.advance(by: .microseconds(100))
        // The timer finds the writer still committing, and leaves the result to the signal.
        try await eventually { paced.store.statistics.aheadLeftToSignal == before.aheadLeftToSignal + 1 }
        #expect(paced.store.statistics.aheadLeftWhileWriting == before.aheadLeftWhileWriting, "no write in flight")
        #expect(paced.store.statistics.computedAhead == before.computedAhead)
        #expect(Self.work(paced.store.statistics) == Self.work(before), "nothing computed ahead")
        #expect(try await paced.query.exec().map(\.id).contains("d3"))
        #expect(try await paced.signalForTheLatest() == 1, "computed once, at the signal")
        await paced.end()
    }

    @Test(
        "A writer committing every 0.4 ms is still committing 0.2 ms after its last commit: none is made ahead",
        arguments: TestStores.kinds)
    func slowerWriterStillCommitting(kind: String) async throws {
        let paced = try await Paced(kind)
        try await paced.commitScheduling("d2")
        // 22 commits 0.4 ms apart up to 8.8 ms, then the computation is due at 9 ms: 0.2 ms after the last commit,
        // which a fixed window of 0.2 ms took for a writer that had stopped.
        let before = paced.store.statistics
        for index in 1...22 {
            paced.clock.advance(by: .microseconds(400))
            try await paced.commit(["w\(index)"])
        }
        paced.clock.advance(by: Self.due - .microseconds(8_800))
        try await eventually { paced.store.statistics.aheadLeftToSignal == before.aheadLeftToSignal + 1 }
        #expect(paced.store.statistics.computedAhead == before.computedAhead)
        #expect(Self.work(paced.store.statistics) == Self.work(before), "nothing computed ahead")
        #expect(try await paced.signalForTheLatest() == 1, "computed once, at the signal")
        await paced.end()
    }

    @Test(
        "A write in flight when the computation ahead is due, after the writer's window: none is made; the signal computes",
        arguments: TestStores.kinds)
    func writeInFlight(kind: String) async throws {
        let paced = try await Paced(kind)
        try await paced.commitScheduling("d2")
        // 8 ms after the last commit, far past the writer's window, a write begins and stays in flight (as a commit
        // checkpointing SQLite's log would) while the computation comes due.
        paced.clock.advance(by: Self.due - .milliseconds(1))
        let release = DispatchSemaphore(value: 0)
        let entered = LockedValue(false)
        let write = Task {
            try await paced.store.write { transaction in
                entered.withLock { $0 = true }
                release.wait()  // on the store's writer queue, not one of Swift concurrency's threads
                try transaction.collection("items").upsert(["_id": "d3", "group": "a"])
            }
        }
        defer { release.signal() }
        try await eventually { entered.withLock { $0 } && paced.store.engine.writes.isWriting }
        let before = paced.store.statistics
        paced.clock.advance(by: .milliseconds(1))
        try await eventually { paced.store.statistics.aheadLeftWhileWriting == before.aheadLeftWhileWriting + 1 }
        #expect(paced.store.statistics.aheadLeftToSignal == before.aheadLeftToSignal + 1)
        #expect(paced.store.statistics.computedAhead == before.computedAhead)
        #expect(Self.work(paced.store.statistics) == Self.work(before), "nothing computed ahead")
        release.signal()
        try await write.value
        try await eventually { paced.store.statistics.deferrals > before.deferrals }
        #expect(try await paced.signalForTheLatest() == 1, "computed once, at the signal, with the write's commit")
        #expect(paced.slow.received.last?.contains("d3") == true)
        await paced.end()
    }

    @Test("The writer's window: twice its interval between commits over the delay, from 0.2 ms to 1 ms")
    func writerWindow() {
        typealias Pace = LiveQueryEngine.WriterPace
        let pace = Pace(since: 100, over: .milliseconds(9))
        #expect(pace.activeWindow(received: 100) == .microseconds(200), "no commit since: the narrowest")
        #expect(pace.activeWindow(received: 190) == .microseconds(200), "every 0.1 ms: 0.2 ms")
        #expect(pace.activeWindow(received: 130) == .microseconds(600), "every 0.3 ms: 0.6 ms")
        #expect(pace.activeWindow(received: 103) == .milliseconds(1), "every 3 ms: at most 1 ms")
    }

    @Test(
        "The owner dies while a computation ahead waits: its round releases the observer, whose handler is not called",
        arguments: TestStores.kinds)
    func ownerDiesBeforeTheComputation(kind: String) async throws {
        let clock = ManualTimeSource()
        let store = try TestStores.make(kind, timeSource: clock)
        let items = store.collection("items")
        let kept = LockedValue<SignalNext?>(nil)
        let calls = LockedValue(0)
        var owner: Owner? = Owner()
        try items.find("group == 'a'").observeLocalWithNextSignal(owner: owner!) { _, _, signalNext in
            calls.withLock { $0 += 1 }
            kept.withLock { $0 = signalNext }
        }
        try await eventually { kept.withLock { $0 != nil } }
        clock.advance(by: Self.handling)
        _ = try await items.upsert(["_id": "1", "group": "a"])
        try await eventually { store.statistics.deferrals == 1 }
        kept.withLock { $0.take() }?()  // after 10 ms: the second result is handed out
        try await eventually { kept.withLock { $0 != nil } }

        // One commit held back (its round sees the owner alive, and schedules the computation), fewer than the 16
        // after which a commit checks for dead owners; then the owner dies, with nothing left to commit.
        _ = try await items.upsert(["_id": "2", "group": "a"])
        try await eventually { store.statistics.deferrals == 2 }
        #expect(await clock.waitForSleepers(1))
        owner = nil
        #expect(store.statistics.observers == 1)
        clock.advance(by: Self.due)
        try await eventually { store.statistics.observers == 0 }
        #expect(calls.withLock { $0 } == 2, "no call after the owner's deinit")
        #expect(store.statistics.queries == 0)
        withExtendedLifetime(owner) {}
    }

    @Test(
        "Off when the store says so: past the time a computation would have been due, the signal computes",
        arguments: TestStores.kinds)
    func off(kind: String) async throws {
        let clock = ManualTimeSource()
        let store = try TestStores.make(kind, anticipatesSignals: false, timeSource: clock)
        let items = store.collection("items")
        let slow = SlowObserver()
        let liveQuery = try await slow.observeUntilBusy(items.find("group == 'a'"))
        clock.advance(by: Self.handling)
        _ = try await items.upsert(["_id": "d1", "group": "a"])
        try await eventually { store.statistics.deferrals == 1 }
        slow.signalNext()
        try await slow.received.wait { $0.count == 2 }
        try await eventually { slow.isHoldingSignal }
        _ = try await items.upsert(["_id": "d2", "group": "a"])
        try await eventually { store.statistics.deferrals == 2 }
        clock.advance(by: Self.handling)

        let before = store.statistics
        slow.signalNext()
        try await slow.received.wait { $0.count == 3 }
        #expect(Self.work(store.statistics) == Self.work(before) + 1, "computed when the observer signalled")
        #expect(store.statistics.computedAhead == 0)
        await liveQuery.stop()
    }
}
