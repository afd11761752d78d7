import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTestingTraits

/// A result brought up to date from changed documents puts them where the store's own query would: strings by their
/// UTF-8 bytes (SQLite's BINARY collation), not by Swift's `<`, which compares strings in a normalized form and so
/// finds canonically equivalent ones equal.
@Suite("Live queries: merged results in the store's order", .leakChecked)
struct MergeOrderTests {
    /// Names whose byte order differs from what a casual comparison would give: a precomposed and a decomposed "é"
    /// (equal to Swift's `==`), prefixes, case, digits inside words, characters of two, three and four bytes, and
    /// strings too long to be stored inline.
    static let names = [
        "", "Z", "a", "ab", "abc", "item 10", "item 9", "\u{E9}", "e\u{301}", "\u{C4}", "\u{130}", "\u{20AC}",
        "\u{1F600}", "a longer name than fits inline", "a longer name than fits inline, longer",
    ]

    /// The names in the store's order: by UTF-8 bytes, ties by `_id`.
    static func byBytes(_ documents: [(id: String, name: String)]) -> [String] {
        documents.sorted { a, b in
            let (x, y) = (Array(a.name.utf8), Array(b.name.utf8))
            return x == y ? a.id < b.id : x.lexicographicallyPrecedes(y)
        }.map(\.id)
    }

    @Test(
        "Many documents renamed in one commit land where a fresh query puts them, incrementally",
        arguments: TestStores.kinds)
    func manyRenamed(kind: String) async throws {
        var names: [String: String] = [:]
        for (index, name) in Self.names.enumerated() { names["d\(index)"] = name }
        let observed = try await Observed(kind, names: names, limit: 12)
        let (store, query, delivered) = (observed.store, observed.query, observed.delivered)
        let expected = { Array(Self.byBytes(names.map { (id: $0.key, name: $0.value) }).prefix(12)) }
        #expect(delivered.withLock { $0 } == expected())

        // Each round renames several documents at once — into the window, within it, out of it — and as many come in
        // as leave, so that the result is brought up to date in place rather than refilled. The second puts the
        // decomposed "é" inside the window and the precomposed one past it, though Swift's `==` finds them equal.
        let rounds: [[String: String]] = [
            ["d12": "", "d8": "Z", "d14": "\u{FFFF}", "d3": "a"],
            ["d7": "e\u{301}", "d9": "\u{E9}", "d1": "item 9", "d2": "A", "d11": "0"],
            [
                "d0": "\u{1F600}", "d5": "a longer name than fits inline, and more", "d10": "\u{10FFFF}", "d6": "ab",
                "d14": "b",
            ],
        ]
        for renames in rounds {
            let before = store.statistics
            try await observed.commit(renames)
            names.merge(renames) { _, new in new }
            let fresh = try await query.exec().map(\.id)
            #expect(fresh == expected(), "the store's own query orders by bytes")
            #expect(delivered.withLock { $0 } == fresh, "renamed \(renames)")
            #expect(store.statistics.incrementalUpdates > before.incrementalUpdates, "brought up to date in place")
        }
        await observed.liveQuery.stop()
    }

    @Test(
        "Most of a result replaced in one commit — renamed in and out, removed, added — lands where a fresh query puts it",
        arguments: TestStores.kinds)
    func mostReplaced(kind: String) async throws {
        var names: [String: String] = [:]
        for index in 0..<30 { names["d\(index)"] = "n\(index < 10 ? "0" : "")\(index)" }
        let observed = try await Observed(kind, names: names, limit: 10)
        let (store, query, delivered) = (observed.store, observed.query, observed.delivered)

        // Fourteen documents of thirty change in one commit: ten from past the window come into it (with names whose
        // byte order is not Swift's), one leaves it, two are removed, one is added past it — most of the result.
        var comingIn: [String: String] = ["d2": "z", "d30": "m"]
        for (offset, name) in Self.names.prefix(10).enumerated() { comingIn["d\(20 + offset)"] = name }
        let renames = comingIn
        let before = store.statistics
        try await observed.commit(renames, removing: ["d0", "d1"])
        names.merge(renames) { _, new in new }
        for id in ["d0", "d1"] { names[id] = nil }
        let fresh = try await query.exec().map(\.id)
        #expect(fresh == Array(Self.byBytes(names.map { (id: $0.key, name: $0.value) }).prefix(10)))
        #expect(delivered.withLock { $0 } == fresh)
        #expect(store.statistics.incrementalUpdates > before.incrementalUpdates, "brought up to date in place")
        #expect(store.statistics.reruns.total == before.reruns.total, "not run again")
        await observed.liveQuery.stop()
    }

    /// A store of one kind whose "items" have the given names (by `_id`), observed sorted by name up to a limit, the
    /// observer caught up: the `_id`s it was delivered last are in ``delivered``.
    struct Observed {
        let store: Store
        let query: PendingQuery
        let liveQuery: LiveQuery
        let delivered = LockedValue<[String]>([])

        init(_ kind: String, names: [String: String], limit: Int) async throws {
            store = try TestStores.make(kind)
            query = store.collection("items").findAll().sort("name").limit(limit)
            let delivered = delivered
            try await store.write { transaction in
                for (id, name) in names {
                    try transaction.collection("items").upsert(["_id": .string(id), "name": .string(name)])
                }
            }
            liveQuery = try query.observeLocal(deliverOn: .inline) { documents, _ in
                delivered.withLock { $0 = documents.map(\.id) }
            }
            await store.waitForLiveQueries()
        }

        /// Renames (or adds) the documents in `names` and removes those in `removed`, in one commit, and waits until
        /// the observer has been offered the result.
        func commit(_ names: [String: String], removing removed: [String] = []) async throws {
            try await store.write { transaction in
                for (id, name) in names {
                    try transaction.collection("items").upsert(["_id": .string(id), "name": .string(name)])
                }
                for id in removed { try transaction.collection("items").remove(id: id) }
            }
            await store.waitForLiveQueries()
        }
    }
}
