import DocumentStoreKit
import LiveQueryKit
import PropertyBased
import Testing
import TetherConcurrency
import TetherJSON
import TetherTestingTraits

/// Random writes and random queries: every snapshot an observer receives is the query's result at some commit,
/// computed here by brute force, and the last one is the final state.
@Suite("Live queries against a brute-force model, on random writes", .timeLimit(.minutes(2)), .leakChecked)
struct PropertyTests {
    /// One write, decoded from a random number: upsert or remove of one of 10 documents, in one of 3 groups.
    struct Write: CustomStringConvertible {
        let remove: Bool
        let id: String
        let group: Int
        let n: Int

        init(_ seed: Int) {
            remove = seed % 5 == 0
            id = "d\((seed / 5) % 10)"
            group = (seed / 50) % 3
            n = (seed / 150) % 20
        }

        var description: String { remove ? "remove \(id)" : "upsert \(id) g\(group) n\(n)" }
    }

    /// The query: one group, sorted by n (then _id), maybe limited.
    struct Query: CustomStringConvertible {
        let group: Int
        let descending: Bool
        let limit: Int?

        init(_ seed: Int) {
            group = seed % 3
            descending = (seed / 3) % 2 == 1
            limit = (seed / 6) % 4 == 0 ? nil : (seed / 6) % 4 + 1
        }

        var description: String {
            "g == \(group) sort n \(descending ? "desc" : "asc") limit \(limit.map(String.init) ?? "-")"
        }

        /// The result over `documents`, by brute force: filter, sort by n then _id, slice.
        func evaluate(_ documents: [String: (group: Int, n: Int)]) -> [String] {
            let matching = documents.filter { $0.value.group == group }
            let sorted = matching.sorted { a, b in
                if a.value.n != b.value.n { return descending ? a.value.n > b.value.n : a.value.n < b.value.n }
                return a.key < b.key
            }.map(\.key)
            return limit.map { Array(sorted.prefix($0)) } ?? sorted
        }
    }

    static func check(store: Store, writes: [Write], query: Query) async throws {
        let items = store.collection("items")
        let received = Received()
        var pending = items.find("g == $args.g", args: ["g": .number(Double(query.group))])
            .sort("n", direction: query.descending ? .descending : .ascending)
        if let limit = query.limit { pending = pending.limit(limit) }
        let liveQuery = try pending.observeLocal { received.append($0, $1) }
        try await received.wait { $0.count == 1 }

        var model: [String: (group: Int, n: Int)] = [:]
        var states: [[String]] = [query.evaluate(model)]
        for write in writes {
            if write.remove {
                try await items.remove(id: write.id)
                model[write.id] = nil
            } else {
                try await items.upsert([
                    "_id": .string(write.id), "g": .number(Double(write.group)), "n": .number(Double(write.n)),
                ])
                model[write.id] = (write.group, write.n)
            }
            states.append(query.evaluate(model))
        }
        let final = query.evaluate(model)
        try await received.wait { $0.last == final }
        let validStates = Set(states)
        for (index, entry) in received.all.enumerated() {
            #expect(
                validStates.contains(entry.ids),
                "snapshot \(index) \(entry.ids) is no commit's result for \(query) after \(writes)")
            if index == 0 { #expect(entry.event == .initial) } else { #expect(!entry.event.isInitial) }
        }
        await liveQuery.stop()
    }

    @Test("In memory: 200 random cases")
    func inMemory() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...2999).array(of: 1...40), Gen.int(in: 0...23)) {
            seeds, querySeed in
            do {
                try await Self.check(store: Store.inMemory(), writes: seeds.map(Write.init), query: Query(querySeed))
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test("On SQLite: 30 random cases")
    func sqlite() async {
        await propertyCheck(count: 30, input: Gen.int(in: 0...2999).array(of: 1...40), Gen.int(in: 0...23)) {
            seeds, querySeed in
            do {
                try await Self.check(
                    store: try TestStores.sqlite(), writes: seeds.map(Write.init), query: Query(querySeed))
            } catch {
                Issue.record("\(error)")
            }
        }
    }
}
