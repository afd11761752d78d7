import DocumentStoreKit
import PersistenceKit
import TetherJSON

extension DocumentStoreConformance {
    static let badInputChecks: [DocumentStoreCheck] = [
        DocumentStoreCheck(
            "bad-documents",
            "invalid JSON, a missing or non-string _id, a non-object: typed errors with context; nothing lost"
        ) { store in
            try await store.upsert(["_id": "keep"], into: "items")
            let json = try await expectError(.invalidJSON, "invalid JSON") {
                _ = try await store.write { try $0.upsert(json: "{\"_id\": \"a\",\n \"n\": tru }", into: "items") }
            }
            try require(json.message.contains("line 2"), "the JSON error should give the line: \(json)")
            try require(json.collection == "items", "the error should name the collection: \(json)")
            try await expectError(.invalidDocument, "missing _id") {
                try await store.upsert(["name": "x"], into: "items")
            }
            try await expectError(.invalidDocument, "numeric _id") { try await store.upsert(["_id": 7], into: "items") }
            try await expectError(.invalidDocument, "empty _id") { try await store.upsert(["_id": ""], into: "items") }
            try await expectError(.invalidDocument, "an array") { try await store.upsert([1, 2], into: "items") }
            try require(try await store.document(id: "keep", in: "items") != nil, "a bad write must not lose data")
            try await store.upsert(["_id": "after"], into: "items")
        },
        DocumentStoreCheck(
            "unstorable-documents",
            "deeper than 512 levels, or NaN and infinities: invalidDocument naming where; the collection stays readable"
        ) { store in
            try await store.upsert(["_id": "keep", "n": 1], into: "items")
            var deep: JSONValue = "bottom"
            for _ in 0..<600 { deep = ["d": deep] }
            let tooDeep = try await expectError(.invalidDocument, "a document 601 levels deep") {
                try await store.upsert(["_id": "deep", "nest": deep], into: "items")
            }
            try require(tooDeep.message.contains("deeper than 512 levels at nest.d.d"), "where: \(tooDeep)")
            try require(tooDeep.id == "deep", "the error names the document: \(tooDeep)")
            var deepest: JSONValue = "bottom"
            for _ in 0..<510 { deepest = [deepest] }
            // 512 levels: the most JSON text reads back.
            try await store.upsert(["_id": "deepest", "nest": deepest], into: "items")
            for (name, number) in [("NaN", Double.nan), ("infinity", .infinity), ("-infinity", -.infinity)] {
                let error = try await expectError(.invalidDocument, name) {
                    try await store.upsert(["_id": "nan", "values": [1, ["x": .number(number)]]], into: "items")
                }
                try require(error.message.contains("at values[1].x"), "\(name): where: \(error)")
            }
            let all = try await store.documents(matching: DocumentQuery(collection: "items"))
            try require(
                all.map(\.id).sorted() == ["deepest", "keep"], "the collection stays readable: \(all.map(\.id))")
            try require(all.first { $0.id == "deepest" }?.body["nest"] == deepest, "512 levels read back whole")
        },
        DocumentStoreCheck(
            "non-finite-query-values",
            "a query comparing with NaN or an infinity — ==, !=, <, IN, contains, under not/and/or — is refused with invalidQuery, as documents holding one are"
        ) { store in
            try await store.upsert(["_id": "a", "price": 1], into: "items")
            let price = try DocumentPath("price")
            for number in [Double.nan, .infinity, -.infinity] {
                for predicate: DocumentPredicate in [
                    .compare(price, .notEqual, .number(number)), .compare(price, .less, .number(number)),
                    .isIn(price, [.number(1), .number(number)]), .contains(try DocumentPath("tags"), .number(number)),
                    .or([.all, .not(.compare(price, .equal, .number(number)))]),
                ] {
                    let error = try await refusal(of: predicate, in: store, "\(predicate)")
                    try require(error.message.contains("\(number)"), "the error names the value: \(error)")
                }
            }
        },
        DocumentStoreCheck(
            "too-many-conditions",
            "a predicate of 4,097 conditions is refused with invalidQuery, saying how many; 4,096 run, and an IN list of 10,000 values is one"
        ) { store in
            try await store.upsert(["_id": "a", "n": 4_095], into: "items")
            let n = try DocumentPath("n")
            func chain(_ count: Int) -> DocumentPredicate {
                .or((0..<count).map { .compare(n, .equal, .number(Double($0))) })
            }
            let error = try await refusal(
                of: chain(DocumentPredicate.maximumConditions + 1), in: store, "4,097 conditions")
            try require(error.message.contains("4097 comparisons"), "the error says how many: \(error)")
            let most = try await store.documents(
                matching: DocumentQuery(collection: "items", predicate: chain(DocumentPredicate.maximumConditions)))
            try require(most.map(\.id) == ["a"], "4,096 conditions run: \(most.map(\.id))")
            let list = try await store.documents(
                matching: DocumentQuery(
                    collection: "items", predicate: .isIn(n, (0..<10_000).map { .number(Double($0)) })))
            try require(list.map(\.id) == ["a"], "a long IN list is one condition: \(list.map(\.id))")
        },
        DocumentStoreCheck(
            "bad-collection-names", "collection names with SQL metacharacters, empty or too long: invalidCollectionName"
        ) { store in
            for name in [
                "items'; DROP TABLE tether_documents; --", "", "a b", "a\"b", "1items",
                String(repeating: "x", count: 101), "ítems",
            ] {
                let error = try await expectError(.invalidCollectionName, "collection \(name.debugDescription)") {
                    try await store.upsert(["_id": "a"], into: name)
                }
                try require(error.collection == name, "the error should carry the name: \(error)")
                try await expectError(.invalidCollectionName, "get from \(name.debugDescription)") {
                    _ = try await store.document(id: "a", in: name)
                }
            }
            try await store.upsert(["_id": "a"], into: "items_2.v-1")
            try require(
                try await store.document(id: "a", in: "items_2.v-1") != nil, "a valid name must work after bad ones")
        },
        DocumentStoreCheck(
            "round-trip-values", "every JSON value round-trips: unicode, escapes, big and small numbers, nesting"
        ) { store in
            let document: JSONValue = [
                "_id": "weird \"id\" ✓ \u{1F600}",
                "text": "line\nbreak\ttab \\ quote\" nul\u{0001} é e\u{301}",
                "numbers": [0, -1, 1.5, 1e-7, 9_007_199_254_740_991, -2.5e300],
                "nested": ["a": ["b": ["c": [true, false, nil]]]],
                "empty": ["obj": [:], "arr": []],
            ]
            try await store.upsert(document, into: "values")
            let back = try await store.document(id: "weird \"id\" ✓ \u{1F600}", in: "values")
            try require(back?.body == document, "round trip changed the document: \(String(describing: back?.body))")
        },
    ]

    /// Runs `predicate` as a query `store` must refuse with `invalidQuery` before running it, and returns the error.
    /// The predicate is set past `DocumentQuery`'s own check, since a store checks again.
    fileprivate static func refusal(
        of predicate: DocumentPredicate, in store: any DocumentStore, _ what: String
    ) async throws -> PersistenceError {
        var query = try DocumentQuery(collection: "items")
        query.predicate = predicate
        return try await expectError(.invalidQuery, what) { _ = try await store.documents(matching: query) }
    }
}
