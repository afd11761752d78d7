import LiveQueryKit
import Testing
import TetherClock
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// A failed evaluation is run again after a wait that grows with each failure in a row, without waiting for a commit
/// — a store unreachable for a moment (a PostgreSQL server restarting) recovers on its own. The waits run on a
/// `ManualTimeSource`: a retry can only run when the test advances the clock past its delay.
@Suite("Live queries: failed evaluations are retried after a growing wait", .timeLimit(minutes: 1), .leakChecked)
struct RetryTests {
    typealias Errors = FailureTests.Errors
    typealias Recording = FailureTests.Recording

    static let policy = EvaluationRetry(
        initialDelay: .milliseconds(100), multiplier: 2, maximumDelay: .milliseconds(400))

    /// Waits for the retry to sleep, advances the clock to a millisecond before its delay — no retry yet, since it
    /// cannot wake before its deadline — then past it.
    static func advanceToRetry(_ clock: ManualTimeSource, _ store: Store, after milliseconds: Int) async {
        #expect(await clock.waitForSleepers(1), "a retry waits")
        let before = store.statistics.retries
        clock.advance(by: .milliseconds(milliseconds - 1))
        #expect(store.statistics.retries == before, "not before its \(milliseconds) ms")
        clock.advance(by: .milliseconds(1))
    }

    @Test("The waits: the first delay, multiplied after each failure in a row, up to the maximum; clamped inputs")
    func delays() {
        let waits = (1...5).map { EvaluationRetry.default.delay(afterFailures: $0) }
        #expect(
            waits == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1_600),
            ])
        #expect(EvaluationRetry.default.delay(afterFailures: 100) == .seconds(5))
        #expect(EvaluationRetry.atNextCommit.delay(afterFailures: 1) == nil)
        let odd = EvaluationRetry(initialDelay: .seconds(-1), multiplier: .nan, maximumDelay: .seconds(-2))
        #expect(odd.initialDelay == .zero && odd.multiplier == 1 && odd.maximumDelay == .zero)
        let shrinking = EvaluationRetry(initialDelay: .seconds(1), multiplier: 0.5, maximumDelay: .seconds(3))
        #expect(shrinking.delay(afterFailures: 4) == .seconds(1), "a multiplier below 1 means 1")
    }

    @Test(
        "A failed re-evaluation is run again once its wait has passed, with no commit, and results resume",
        arguments: TestStores.kinds)
    func recoversWithoutCommit(kind: String) async throws {
        let clock = ManualTimeSource()
        let (store, faulty) = try FailureTests.faultyStore(kind, retry: Self.policy, clock: clock)
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let recording = try Recording(items.findAll().sort("_id"))
        let (received, errors) = (recording.received, recording.errors)
        try await received.wait { $0.last == ["a"] }

        faulty.faults.readFailure = 1
        try await items.upsert(["_id": "b"])
        try await eventually { errors.count == 1 }
        faulty.faults.readFailure = 0
        await Self.advanceToRetry(clock, store, after: 100)
        try await received.wait { $0.last == ["a", "b"] }
        #expect(store.statistics.retries == 1)
        guard case .update(let update) = received.all.last?.event else {
            Issue.record("results resumed with an update from the last good result")
            return
        }
        #expect(update.oldDocuments.map(\.id) == ["a"])
        // A success schedules no retry. Not checked by the clock's sleepers: a quiet watch may sleep on it too (most
        // likely what the one sleeper left under ThreadSanitizer was). With the clock far past any retry's wait, a
        // retry would run before the round of a commit made after — the engine's queue takes them in turn — so that
        // commit's result closes the window.
        clock.advance(by: .seconds(3600))
        try await items.upsert(["_id": "c"])
        try await received.wait { $0.last == ["a", "b", "c"] }
        #expect(store.statistics.retries == 1, "a success schedules no retry")
        await recording.liveQuery.stop()
    }

    @Test(
        "Each failure in a row waits longer, up to the maximum; each reaches onError; a success ends the streak",
        arguments: TestStores.kinds)
    func backoffGrows(kind: String) async throws {
        let clock = ManualTimeSource()
        let (store, faulty) = try FailureTests.faultyStore(kind, retry: Self.policy, clock: clock)
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        faulty.faults.readFailure = 1
        let recording = try Recording(items.findAll())
        let (received, errors) = (recording.received, recording.errors)
        try await eventually { errors.count == 1 }
        for (attempt, delay) in [100, 200, 400, 400].enumerated() {
            await Self.advanceToRetry(clock, store, after: delay)
            try await eventually { errors.count == attempt + 2 }
            #expect(store.statistics.retries == attempt + 1)
        }
        #expect(received.count == 0)
        faulty.faults.readFailure = 0
        await Self.advanceToRetry(clock, store, after: 400)
        try await received.wait { $0.count == 1 }
        #expect(received.all.first?.event == .initial)
        #expect(received.last == ["a"])

        // A new streak starts from the first delay again.
        faulty.faults.readFailure = 1
        try await items.upsert(["_id": "b"])
        try await eventually { errors.count == 6 }
        faulty.faults.readFailure = 0
        await Self.advanceToRetry(clock, store, after: 100)
        try await received.wait { $0.last?.sorted() == ["a", "b"] }
        await recording.liveQuery.stop()
    }

    @Test(
        "A retry whose query is no longer observed when its wait ends runs nothing, and keeps nothing alive",
        arguments: TestStores.kinds)
    func stoppedWhileWaiting(kind: String) async throws {
        let clock = ManualTimeSource()
        let (store, faulty) = try FailureTests.faultyStore(kind, retry: Self.policy, clock: clock)
        let items = store.collection("items")
        faulty.faults.readFailure = 1
        let errors = Errors()
        let leaks = LeakTracker()
        do {
            let owner = leaks.track(Owner(), "owner")
            _ = try items.findAll().observeLocal(owner: owner, onError: { errors.append($0) }) { _, _ in
                Issue.record("no result while the store fails")
            }
            try await eventually { errors.count == 1 }
            #expect(await clock.waitForSleepers(1))
        }
        // The owner is gone while the retry waits: the observer goes at the next round — the retry's own. Waited
        // for: under ThreadSanitizer the retry once evaluated, most likely because something (the error's delivery,
        // perhaps) still held the owner a moment after onError had run.
        #expect(await leaks.survivors(waitingUpTo: .seconds(30)).isEmpty)
        faulty.faults.readFailure = 0
        clock.advance(by: .milliseconds(100))
        try await eventually { store.statistics.observers == 0 }
        #expect(store.statistics.evaluations == 0)
        #expect(errors.count == 1)
    }
}
