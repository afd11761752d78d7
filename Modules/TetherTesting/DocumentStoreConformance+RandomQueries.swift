import DocumentStoreKit
import PersistenceKit
import TetherJSON

extension DocumentStoreConformance {
    static let randomQueryChecks: [DocumentStoreCheck] = [
        DocumentStoreCheck(
            "random-queries",
            "300 seeded random queries — every kind of condition, nested, over near-miss values, sorted, sliced — return what the in-memory reference returns"
        ) { store in
            var random = SeededRandom(seed: 0x7e7_4e5)
            var documents: [StoredDocument] = []
            for index in 0..<80 {
                var members: [String: JSONValue] = ["_id": .string("d\(index)")]
                for field in ["a", "b", "t"] where random.next() < 0.85 { members[field] = random.pick(values) }
                if random.next() < 0.7 { members["n"] = ["x": random.pick(values)] }
                documents.append(try StoredDocument(.object(members)))
            }
            try await store.write { [documents] transaction in
                for document in documents { try transaction.upsert(document.body, into: "random") }
            }
            for _ in 0..<300 {
                let query = try DocumentQuery(
                    collection: "random", predicate: random.predicate(depth: 3),
                    sort: (0..<Int(random.nextWord() % 3)).map { _ in
                        DocumentSort(random.pick(paths), random.next() < 0.5 ? .ascending : .descending)
                    },
                    limit: random.next() < 0.5 ? Int(random.nextWord() % 12) : nil,
                    offset: random.next() < 0.3 ? Int(random.nextWord() % 6) : 0)
                let expected = query.apply(to: documents).map(\.id)
                let found = try await store.read { try $0.documents(matching: query) }.map(\.id)
                try require(found == expected, "\(query): the store returned \(found), the reference \(expected)")
                let count = try await store.read { try $0.count(matching: query) }
                let all = documents.filter { query.predicate.matches($0.body) }.count
                try require(count == all, "\(query.predicate): the store counted \(count), the reference \(all)")
            }
        }
    ]

    /// Values that differ by type, case, accent, sign and representation only: where stores go wrong.
    fileprivate static let values: [JSONValue] = [
        .null, true, false, 0, 1, 1.5, -2, 10, 1e21, "1", "a", "A", "b", "é", "e\u{301}", "a%b", "ab", "", "Z",
        [1, "a"], ["b"], [], [nil], [["a"]], ["x": 1], ["x": "a"],
    ]

    /// `_id` too: SQLite answers conditions on it from its `id` column, not the document's JSON.
    fileprivate static let paths: [DocumentPath] = ["a", "b", "t", "n.x", "n", "missing", "_id"].map { path($0) }
}

extension SeededRandom {
    fileprivate mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int(nextWord() % UInt64(choices.count))]
    }

    fileprivate mutating func scalar() -> ScalarValue {
        pick([
            .null, .bool(true), .bool(false), .number(0), .number(1), .number(1.5), .number(-2), .number(10),
            .number(1e21), .string("1"), .string("a"), .string("A"), .string("b"), .string("é"), .string("e\u{301}"),
            .string("a%b"), .string("ab"), .string(""), .string("Z"), .string("d1"), .string("d12"),
        ])
    }

    fileprivate mutating func predicate(depth: Int) -> DocumentPredicate {
        let path = pick(DocumentStoreConformance.paths)
        let choice = nextWord() % (depth > 0 ? 9 : 5)
        switch choice {
        case 0: return .compare(path, pick(ComparisonOperator.allCases), scalar())
        case 1: return .isIn(path, (0..<Int(nextWord() % 4)).map { _ in scalar() })
        case 2: return .contains(path, scalar())
        case 3: return .like(path, pick(["a%", "%b", "_", "%", "a\\%b", "A_", "", "\\", "%é%"]))
        case 4: return .all
        case 5: return .not(predicate(depth: depth - 1))
        case 6: return .and((0..<Int(nextWord() % 4)).map { _ in predicate(depth: depth - 1) })
        case 7: return .or((0..<Int(nextWord() % 4)).map { _ in predicate(depth: depth - 1) })
        default: return .compare(path, .equal, scalar())
        }
    }
}
