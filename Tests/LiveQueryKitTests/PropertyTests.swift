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
    struct Write: CustomStringConvertible, Sendable {
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

    /// Writers at once — so the engine's reads land after commits it has not yet applied — and three queries over
    /// the same collection: each observer's results are the query's at committed states, in commit order (each one
    /// no earlier than the one before), and the last is the final state. Each write's commit number comes from its
    /// own transaction, so the model applies the writes in the order the store committed them.
    static func checkConcurrent(store: Store, writers: [[Write]], queries: [Query]) async throws {
        let items = store.collection("items")
        let observed = try queries.map { query in
            let received = Received()
            var pending = items.find("g == $args.g", args: ["g": .number(Double(query.group))])
                .sort("n", direction: query.descending ? .descending : .ascending)
            if let limit = query.limit { pending = pending.limit(limit) }
            return (query, received, try pending.observeLocal { received.append($0, $1) })
        }
        for (_, received, _) in observed { try await received.wait { $0.count == 1 } }

        let committed = LockedValue<[(commit: UInt64, write: Write)]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writes in writers {
                group.addTask {
                    for write in writes {
                        let commit = try await store.documents.write { transaction -> UInt64? in
                            let before = try transaction.commitNumber()
                            let changed =
                                write.remove
                                ? try transaction.remove(id: write.id, from: "items")
                                : try transaction.upsert(
                                    [
                                        "_id": .string(write.id), "g": .number(Double(write.group)),
                                        "n": .number(Double(write.n)),
                                    ], into: "items") != nil
                            return changed ? before + 1 : nil
                        }
                        if let commit { committed.withLock { $0.append((commit, write)) } }
                    }
                }
            }
            try await group.waitForAll()
        }

        var model: [String: (group: Int, n: Int)] = [:]
        var states: [[[String]]] = [queries.map { $0.evaluate(model) }]
        for (_, write) in committed.withLock({ $0 }).sorted(by: { $0.commit < $1.commit }) {
            model[write.id] = write.remove ? nil : (write.group, write.n)
            states.append(queries.map { $0.evaluate(model) })
        }
        for (index, (query, received, liveQuery)) in observed.enumerated() {
            let final = query.evaluate(model)
            try await received.wait { $0.last == final }
            // Each result matched at a commit no earlier than the previous result's.
            var position = 0
            for (delivery, entry) in received.all.enumerated() {
                guard let at = states[position...].firstIndex(where: { $0[index] == entry.ids }) else {
                    let message = "\(query): delivery \(delivery) \(entry.ids) is no committed state's result"
                    Issue.record("\(message) at or after commit \(position); writers \(writers)")
                    break
                }
                position = at
            }
            await liveQuery.stop()
        }
    }

    @Test(
        "Concurrent writers, three queries, in memory and on SQLite: 40 random cases each", arguments: TestStores.kinds)
    func concurrentWriters(kind: String) async {
        await propertyCheck(
            count: 40, input: Gen.int(in: 0...2999).array(of: 5...30).array(of: 3), Gen.int(in: 0...23).array(of: 3)
        ) { writers, querySeeds in
            do {
                try await Self.checkConcurrent(
                    store: try TestStores.make(kind), writers: writers.map { $0.map(Write.init) },
                    queries: querySeeds.map(Query.init))
            } catch {
                Issue.record("\(error)")
            }
        }
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
