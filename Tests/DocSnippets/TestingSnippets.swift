// The examples of Docs/Testing.md, compiled (see OwnershipKitSnippets.swift).
import LiveQueryKit
import OwnershipKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

final class Owner {}

final class Recorder: TemperatureObserver {
    func thermometer(_ notice: ObserverNotice<Double>) {}
}

@Test("A leak tracker sees what outlives its owner")
func leakTrackerExample() {
    let table = ObserverTable<any TemperatureObserver, Double> { $0.thermometer($1) }
    // snippet: Testing.leak-tracker
    let tracker = LeakTracker()
    do {
        let owner = tracker.track(Owner())
        table.add(tracker.track(Recorder()), owner: owner)
    }
    table.sweep()
    #expect(tracker.survivors.isEmpty, "still alive: \(tracker.survivors)")
    // end snippet
}

// snippet: Testing.leak-checked
@Suite("Items screen", .leakChecked)
struct ItemsScreenTests {
    @Test func showsTheList() async throws {
        let store = Store.inMemory()
        // Each `next()` is the signal for the next result: the first, then the one with the new document.
        var results = try store.collection("items").find("a == 1").snapshots().makeAsyncIterator()
        #expect(try await results.next()?.documents.count == 0)
        try await store.collection("items").upsert(["_id": "1", "a": 1])
        #expect(try await results.next()?.documents.count == 1)
    }
}
// end snippet
