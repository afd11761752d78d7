import DocumentStoreKit
import Foundation
import LiveQueryKit
import Observation
import Testing
import TetherConcurrency
import TetherJSON
import TetherObservation
import TetherTesting
import TetherTestingTraits

/// `LiveQueryModel` on the in-memory store: results as Observation properties, a change per delivered result and
/// none for an unchanged one, back pressure by reading, errors, and nothing left behind a released model.
@Suite("LiveQueryModel: a live query as Observation properties", .timeLimit(minutes: 1), .leakChecked)
struct LiveQueryModelTests {
    let store = Store.inMemory()
    var items: StoreCollection { store.collection("items") }

    @Test("Each delivered result is one change; a commit that leaves the result unchanged is none")
    func onePerResult() async throws {
        let model = try LiveQueryModel(items.find("a == 1").sort("_id"), deliverOn: .serialQueue())
        try await eventually { model.resultCount == 1 }
        #expect(model.documents.isEmpty)
        #expect(model.event == .initial)

        let fired = Counter()
        withObservationTracking {
            _ = model.documents
        } onChange: {
            fired.add()
        }
        try await items.upsert(["_id": "x", "a": 2])  // outside the query: its result does not change
        try await items.upsert(["_id": "y", "a": 1])
        try await eventually { model.resultCount == 2 }
        #expect(fired.value == 1)
        #expect(model.documents.map(\.id) == ["y"], "the result taken second is the one that changed")
        guard case .update(let update) = model.event else {
            Issue.record("the second result is an update")
            return
        }
        #expect(update.insertions == [0])
    }

    @Test("Observations on the main actor yields each result once, in order, the latest")
    @MainActor
    func observations() async throws {
        let model = try LiveQueryModel(items.findAll().sort("_id"), deliverOn: .queue(.main))
        let seen = LockedValue<[Int]>([])
        let reader = Task { @MainActor in
            for await count in Observations({ model.documents.count }) {
                seen.withLock { $0.append(count) }
                if count == 50 { return }
            }
        }
        try await eventually { model.resultCount >= 1 }
        for index in 0..<50 { try await items.upsert(["_id": .string("d\(index)")]) }
        await reader.value
        let counts = seen.withLock { $0 }
        #expect(counts.last == 50)
        // The first value is the model's before any result (empty); then one value per result taken.
        let taken = Array(counts.dropFirst())
        #expect(taken == taken.sorted() && Set(taken).count == taken.count, "each result once, in order: \(counts)")
        #expect(model.resultCount <= 51)
    }

    @Test("Unread, the model takes no further result; read, it takes the latest")
    func backPressure() async throws {
        let model = try LiveQueryModel(items.findAll(), deliverOn: .serialQueue())
        try await eventually { model.resultCount == 1 }
        _ = model.documents
        try await items.upsert(["_id": "first"])
        try await eventually { model.resultCount == 2 }
        // A plain observer of the same query, as a witness: once it shows the last commit, the model has had every
        // chance to take it.
        let witness = Received()
        let liveQuery = try items.findAll().observeLocal { witness.append($0, $1) }
        for index in 0..<100 { try await items.upsert(["_id": .string("d\(index)")]) }
        try await witness.wait { $0.last?.count == 101 }
        #expect(model.resultCount == 2, "no result is taken before the last one is read")

        #expect(model.documents.count == 1)  // the read lets the model take the next result: the latest
        try await eventually { model.resultCount == 3 }
        #expect(model.documents.count == 101)
        await liveQuery.stop()
    }

    @Test("Pacing .immediately takes each result unread, still only the latest")
    func immediately() async throws {
        let model = try LiveQueryModel(items.findAll(), deliverOn: .serialQueue(), pacing: .immediately)
        for index in 0..<20 { try await items.upsert(["_id": .string("d\(index)")]) }
        try await eventually { model.resultCount >= 2 && model.documents.count == 20 }
        #expect(model.resultCount <= 21)
    }

    @Test("An evaluation that fails sets the error and keeps the documents; the next result clears it")
    func failure() async throws {
        let faulty = FaultyDocumentStore(
            base: GatedDocumentStore(base: InMemoryDocumentStore()), faults: .init(), seed: 1)
        let store = Store(faulty)
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let model = try LiveQueryModel(items.findAll(), deliverOn: .serialQueue())
        try await eventually { model.resultCount == 1 }
        #expect(model.documents.map(\.id) == ["a"])

        faulty.faults.readFailure = 1
        try await items.upsert(["_id": "b"])
        try await eventually { model.error != nil }
        #expect(model.documents.map(\.id) == ["a"])

        faulty.faults.readFailure = 0
        try await items.upsert(["_id": "c"])
        try await eventually { model.resultCount == 2 }
        #expect(model.error == nil)
        #expect(model.documents.map(\.id).sorted() == ["a", "b", "c"])
    }

    @Test("An invalid query is refused when the model is made, with its column; nothing is observed")
    func invalidQuery() async throws {
        let error = #expect(throws: QueryError.self) {
            try LiveQueryModel(items.find("store_id =="), deliverOn: .inline)
        }
        #expect(error?.column == 12)
        #expect(error?.query == "store_id ==")
        await store.waitForLiveQueries()
        #expect(store.statistics.observers == 0)
    }

    @Test("A released model ends its observation, with a result waiting for it; stop() ends it too")
    func release() async throws {
        weak var released: LiveQueryModel?
        do {
            let model = try LiveQueryModel(items.findAll(), deliverOn: .serialQueue())
            released = model
            try await eventually { model.resultCount == 1 }
            try await items.upsert(["_id": "a"])  // its result waits: the first was never read
        }
        #expect(released == nil)
        try await items.upsert(["_id": "b"])
        await store.waitForLiveQueries()

        let stopped = try LiveQueryModel(items.findAll(), deliverOn: .serialQueue(), pacing: .immediately)
        try await eventually { stopped.resultCount == 1 }
        await stopped.stop()
        try await items.upsert(["_id": "c"])
        await store.waitForLiveQueries()
        #expect(stopped.resultCount == 1)
    }
}

/// Results a plain observer received, in order.
final class Received: Sendable {
    private let all = LockedValue<[[Document]]>([])
    func append(_ documents: [Document], _ event: LiveQueryEvent) { all.withLock { $0.append(documents) } }
    /// Waits until `condition` holds for the results so far.
    func wait(_ condition: @escaping @Sendable ([[Document]]) -> Bool) async throws {
        try await eventually { condition(self.all.withLock { $0 }) }
    }
}
