import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Six hundred owner-tied observers over a hundred queries: their first results take a fair share of the processor
/// (a hundred evaluations on a two-core machine), so the suite never runs beside the stress tests that load every
/// core on purpose. Its time limit counts the wait for its turn.
@Suite("Observing: owners dying by the hundred", .needsProcessorTime, .timeLimit(.minutes(5)), .leakChecked)
struct ManyOwnersTests {
    @Test(
        "Owners dying by the hundred: one commit after they died releases every observer — more than one round's sweep — with no commit after",
        arguments: TestStores.kinds)
    func manyOwnersDieAtOnce(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let received = LockedValue(0)
        var owners: [ObservationTests.Owner] = (0..<600).map { _ in ObservationTests.Owner() }
        for (index, owner) in owners.enumerated() {
            // A hundred queries, six observers each.
            try items.find("n == \(index % 100)").observeLocal(owner: owner) { _, _ in received.withLock { $0 += 1 } }
        }
        // Correctness deadlines, not speed: the engine runs on a queue of its own, so other tests holding Swift
        // concurrency's threads do not slow it (see Testing.md); a broken sweep never gets there at all.
        try await eventually(within: .seconds(30)) { received.withLock { $0 } >= 600 }
        #expect(store.statistics.observers == 600)
        owners.removeAll()
        try await items.upsert(["_id": "after", "n": 1])
        // Nothing is committed from here on: the engine goes on sweeping until every observer has been looked at.
        try await eventually(within: .seconds(30)) { store.statistics.observers == 0 }
        withExtendedLifetime(owners) {}
    }
}
