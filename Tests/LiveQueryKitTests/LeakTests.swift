import Foundation
import LiveQueryKit
import Testing
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Stores, live queries, their owners and handlers are freed when the application lets go of them.
@Suite("Leaks: stores and live queries", .leakChecked)
struct LeakTests {
    final class Screen: Sendable {}

    @Test(
        "A store, its live queries (stopped, owner-tied, dropped) and their owners are all deallocated",
        arguments: TestStores.kinds)
    func everythingIsFreed(_ kind: String) async throws {
        let tracker = LeakTracker()
        do {
            let store = tracker.track(try TestStores.make(kind), "store")
            let items = store.collection("items")
            let seen = LockedValue<Set<String>>([])
            let stopped = tracker.track(
                try items.find("a == 1").observeLocal { documents, _ in
                    if !documents.isEmpty { seen.withLock { _ = $0.insert("stopped") } }
                }, "stopped query")
            let screen = tracker.track(Screen(), "owner")
            tracker.track(
                try items.findAll().observeLocal(owner: screen) { documents, _ in
                    if !documents.isEmpty { seen.withLock { _ = $0.insert("owner-tied") } }
                }, "owner-tied query")
            tracker.track(try items.find("a == 2").observeLocal { _, _ in }, "dropped handle")
            _ = try await items.upsert(["_id": "x", "a": 1])
            // A deadline for correctness: under ThreadSanitizer beside CPU-bound suites, the drain's resumptions can
            // wait seconds for one of the two cooperative threads.
            try await eventually { seen.withLock { $0.count } >= 2 }
            #expect(seen.withLock { $0 } == ["stopped", "owner-tied"], "both queries saw the document")
            await stopped.stop()
            withExtendedLifetime(screen) {}
        }
        let survivors = await tracker.survivors(waitingUpTo: .seconds(10))
        #expect(survivors.isEmpty, "still alive: \(survivors)")
    }

    @Test("A live query stopped while the engine starts it is freed, its handler with it")
    func stoppedWhileStarting() async throws {
        // The engine reads the clock as it starts an observer; this one holds it there while the test stops it.
        let clock = HeldTimeSource(base: ManualTimeSource())
        let tracker = LeakTracker()
        let store = Store.inMemory(configuration: .init(timeSource: clock))
        do {
            let captured = tracker.track(Screen(), "object the handler captures")
            let gate = clock.holdNextElapsedRead()
            let liveQuery = try store.collection("items").findAll().observeLocal { _, _ in
                withExtendedLifetime(captured) {}
            }
            try await eventually { gate.isReached }
            await liveQuery.stop()
            gate.open()
        }
        let survivors = await tracker.survivors(waitingUpTo: .seconds(10))
        #expect(survivors.isEmpty, "still alive: \(survivors)")
    }

    @Test("The suite leak check tracks every store, engine, document store and live query a test makes")
    func creationsAreTracked() async throws {
        let tracker = LeakTracker()
        try tracker.trackingCreations {
            let store = Store.inMemory()
            let query = try store.collection("items").find("a == 1").observeLocal { _, _ in }
            #expect(
                tracker.survivors == [
                    "in-memory document store", "live-query engine", "store", "live query \"a == 1\"",
                ])
            query.stop()
            withExtendedLifetime(store) {}
        }
        #expect(await tracker.survivors(waitingUpTo: .seconds(10)).isEmpty)
    }

    @Test("A leak-checked test can track objects of its own with LeakCheckTrait.current")
    func ownObjectsAreTracked() throws {
        let tracker = try #require(LeakCheckTrait.current, "the suite is leak-checked")
        let screen = tracker.track(Screen(), "screen")
        #expect(tracker.survivors.contains("screen"))
        withExtendedLifetime(screen) {}
    }

    @Test("The leak check names what a test leaves alive: a live query nobody stopped keeps its engine and storage")
    func leakCheckNamesSurvivors() async throws {
        let leaked = LockedValue<LiveQuery?>(nil)
        let check = LeakCheckTrait(waitLimit: .milliseconds(50))
        let test = try #require(Test.current)
        try await withKnownIssue {
            try await check.provideScope(for: test, testCase: Test.Case.current) {
                let query = try Store.inMemory().collection("items").find("a == 1").observeLocal { _, _ in }
                leaked.withLock { $0 = query }
            }
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("3 of 4 tracked objects outlived the test")
                && text.hasSuffix("in-memory document store, live-query engine, live query \"a == 1\"")
        }
        leaked.withLock {
            $0?.stop()
            $0 = nil
        }
    }
}
