import LiveQueryKit
import Testing
import TetherJSON
import TetherTestingTraits

@Suite("Events: indexes for insertions, deletions, updates and moves", .leakChecked)
struct DiffTests {
    static func documents(_ ids: [String], version: [String: Int] = [:]) async throws -> [Document] {
        let store = Store.inMemory()
        for id in ids {
            try await store.collection("c").upsert(["_id": .string(id), "v": .number(Double(version[id] ?? 0))])
        }
        let all = try await store.collection("c").findAll().exec()
        return ids.map { id in all.first { $0.id == id }! }
    }

    /// Applies an update to the old list as a table view would, and returns the ids in the resulting order.
    static func apply(_ update: LiveQueryUpdate, to new: [Document]) -> [String] {
        // Deletions (old indexes), then insertions and move destinations (new indexes) must give the new list.
        var survivors = update.oldDocuments.enumerated().filter { !update.deletions.contains($0.offset) }
        let movedFrom = Set(update.moves.map(\.from))
        survivors.removeAll { movedFrom.contains($0.offset) }
        var result = survivors.map(\.element.id)
        let placed = (update.insertions + update.moves.map(\.to)).sorted()
        for index in placed { result.insert(new[index].id, at: index) }
        return result
    }

    @Test(
        "Every old → new pair: the indexes rebuild the new list, and moves are the fewest",
        arguments: [
            (["a", "b", "c"], ["a", "b", "c"], 0),
            (["a", "b", "c"], ["a", "c"], 0),
            (["a", "c"], ["a", "b", "c"], 0),
            (["a", "b", "c"], ["c", "a", "b"], 1),
            (["a", "b", "c", "d"], ["d", "c", "b", "a"], 3),
            (["a", "b", "c", "d", "e"], ["b", "x", "a", "e", "d"], 2),
            ([], ["a", "b"], 0),
            (["a", "b"], [], 0),
        ])
    func diff(old: [String], new: [String], expectedMoves: Int) async throws {
        let update = LiveQueryUpdate(from: try await Self.documents(old), to: try await Self.documents(new))
        #expect(update.insertions == new.indices.filter { !old.contains(new[$0]) })
        #expect(update.deletions == old.indices.filter { !new.contains(old[$0]) })
        #expect(update.moves.count == expectedMoves, "\(update.moves)")
        #expect(Self.apply(update, to: try await Self.documents(new)) == new)
    }

    @Test("Updates are new indexes of documents whose content changed")
    func updates() async throws {
        let old = try await Self.documents(["a", "b", "c"])
        let new = try await Self.documents(["c", "a", "b"], version: ["b": 1])
        let update = LiveQueryUpdate(from: old, to: new)
        #expect(update.updates == [2])
        #expect(update.moves.map(\.from) == [2])
    }

    @Test("Through a live query: a sort-order change is a move, the limit boundary is an insertion and a deletion")
    func throughLiveQuery() async throws {
        let store = Store.inMemory()
        let items = store.collection("items")
        for (id, price) in [("a", 1.0), ("b", 2.0), ("c", 3.0), ("d", 4.0)] {
            try await items.upsert(["_id": .string(id), "price": .number(price)])
        }
        let received = Received()
        let liveQuery = try items.findAll().sort("price").limit(3).observeLocal { received.append($0, $1) }
        try await received.wait { $0.count == 1 }
        // c becomes the cheapest: it moves from 2 to 0, and its content changed.
        try await items.upsert(["_id": "c", "price": 0.5])
        try await received.wait { $0.last == ["c", "a", "b"] }
        // a becomes the dearest: it leaves the window (deletion) and d enters (insertion).
        try await items.upsert(["_id": "a", "price": 9])
        try await received.wait { $0.last == ["c", "b", "d"] }
        let events = received.all.map(\.event)
        guard case .update(let move) = events[1], case .update(let boundary) = events[2] else {
            Issue.record("expected two updates: \(events)")
            return
        }
        #expect(move.moves == [LiveQueryUpdate.Move(from: 2, to: 0)])
        #expect(move.updates == [0])
        #expect(boundary.deletions == [1])
        #expect(boundary.insertions == [2])
        await liveQuery.stop()
    }
}
