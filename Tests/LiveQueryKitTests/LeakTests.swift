import Foundation
import LiveQueryKit
import TetherConcurrency
import TetherJSON
import TetherTesting
import Testing

/// Stores, live queries, their owners and handlers are freed when the application lets go of them.
@Suite("Leaks: stores and live queries")
struct LeakTests {
    final class Screen: Sendable {}

    @Test("A store, its live queries (stopped, owner-tied, dropped) and their owners are all deallocated", arguments: TestStores.kinds)
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
            let deadline = ContinuousClock.now + .seconds(10)
            while seen.withLock({ $0.count }) < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
            #expect(seen.withLock { $0 } == ["stopped", "owner-tied"], "both queries saw the document")
            stopped.stop()
            withExtendedLifetime(screen) {}
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !tracker.survivors.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(tracker.survivors.isEmpty, "still alive: \(tracker.survivors)")
    }
}
