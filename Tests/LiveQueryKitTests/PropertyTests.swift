import DocumentStoreKit
import LiveQueryKit
import PropertyBased
import Testing
import TetherConcurrency
import TetherJSON
import TetherTestingTraits

/// Random writes and random queries: every snapshot an observer receives is the query's result at some commit,
/// computed here by brute force, and the last one is the final state.
@Suite("Live queries against a brute-force model, on random writes", .timeLimit(minutes: 2), .leakChecked)
struct PropertyTests {
    /// One write, decoded from a random number: upsert or remove of one of 10 documents, in one of 3 groups and one
    /// of 2 kinds.
    struct Write: CustomStringConvertible, Sendable {
        let remove: Bool
        let id: String
        let document: Model.Document

        init(_ seed: Int) {
            remove = seed % 5 == 0
            id = "d\((seed / 5) % 10)"
            document = Model.Document(group: (seed / 50) % 3, kind: (seed / 7) % 2, n: (seed / 150) % 20)
        }

        var body: JSONValue {
            [
                "_id": .string(id), "g": .number(Double(document.group)), "k": .number(Double(document.kind)),
                "n": .number(Double(document.n)),
            ]
        }

        var description: String {
            remove ? "remove \(id)" : "upsert \(id) g\(document.group) k\(document.kind) n\(document.n)"
        }
    }

    /// The documents, as the brute force sees them.
    struct Model {
        struct Document: Sendable {
            let group: Int
            let kind: Int
            let n: Int
        }

        var documents: [String: Document] = [:]

        mutating func apply(_ write: Write) {
            documents[write.id] = write.remove ? nil : write.document
        }
    }

    /// The query: one group, maybe of one kind too (a second equality, before or after the group's, so that the
    /// relevance index files queries sharing a group under their kind and the other way round), sorted by n (then
    /// _id), maybe limited.
    struct Query: CustomStringConvertible {
        let group: Int
        let kind: Int?
        let kindFirst: Bool
        let descending: Bool
        let limit: Int?

        /// Seeds 0...71.
        init(_ seed: Int) {
            group = seed % 3
            descending = (seed / 3) % 2 == 1
            limit = (seed / 6) % 4 == 0 ? nil : (seed / 6) % 4 + 1
            kind = (seed / 24) % 3 == 0 ? nil : (seed / 24) % 3 - 1
            kindFirst = seed % 2 == 0
        }

        var predicate: String {
            guard kind != nil else { return "g == $args.g" }
            return kindFirst ? "k == $args.k && g == $args.g" : "g == $args.g && k == $args.k"
        }

        var description: String {
            "\(predicate) g=\(group) k=\(kind.map(String.init) ?? "-") sort n \(descending ? "desc" : "asc") limit "
                + (limit.map(String.init) ?? "-")
        }

        func pending(in items: StoreCollection) -> PendingQuery {
            var args: [String: JSONValue] = ["g": .number(Double(group))]
            if let kind { args["k"] = .number(Double(kind)) }
            let pending = items.find(predicate, args: args).sort(
                "n", direction: descending ? .descending : .ascending)
            return limit.map { pending.limit($0) } ?? pending
        }

        /// The result over `model`, by brute force: filter, sort by n then _id, slice.
        func evaluate(_ model: Model) -> [String] {
            let matching = model.documents.filter { $0.value.group == group && (kind == nil || $0.value.kind == kind) }
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
        let liveQuery = try query.pending(in: items).observeLocal { received.append($0, $1) }
        try await received.wait { $0.count == 1 }

        var model = Model()
        var states: [[String]] = [query.evaluate(model)]
        for write in writes {
            if write.remove {
                try await items.remove(id: write.id)
            } else {
                try await items.upsert(write.body)
            }
            model.apply(write)
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
            return (query, received, try query.pending(in: items).observeLocal { received.append($0, $1) })
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
                                : try transaction.upsert(write.body, into: "items") != nil
                            return changed ? before + 1 : nil
                        }
                        if let commit { committed.withLock { $0.append((commit, write)) } }
                    }
                }
            }
            try await group.waitForAll()
        }

        var model = Model()
        var states: [[[String]]] = [queries.map { $0.evaluate(model) }]
        for (_, write) in committed.withLock({ $0 }).sorted(by: { $0.commit < $1.commit }) {
            model.apply(write)
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
            count: 40, input: Gen.int(in: 0...2999).array(of: 5...30).array(of: 3), Gen.int(in: 0...71).array(of: 3)
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
        await propertyCheck(count: 200, input: Gen.int(in: 0...2999).array(of: 1...40), Gen.int(in: 0...71)) {
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
        await propertyCheck(count: 30, input: Gen.int(in: 0...2999).array(of: 1...40), Gen.int(in: 0...71)) {
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
