import DocumentStoreKit
import PersistenceKit
import TetherJSON

extension DocumentStoreConformance {
    /// Documents with every kind of value, missing fields and near-misses (1 vs "1" vs true).
    static let queryDataset: [JSONValue] = [
        [
            "_id": "a", "store_id": "abc123", "name": "Apple", "price": 1.5, "stock": 10, "tags": ["fruit", "red"],
            "meta": ["origin": ["country": "NZ"]], "organic": true,
        ],
        [
            "_id": "b", "store_id": "abc123", "name": "banana", "price": 0.25, "stock": 0, "tags": ["fruit"],
            "meta": ["origin": ["country": "EC"]], "organic": false,
        ],
        ["_id": "c", "store_id": "xyz", "name": "Cherry", "price": 12, "stock": 1, "tags": [], "organic": nil],
        ["_id": "d", "store_id": "abc123", "name": "date 100%", "price": "12", "tags": "fruit, dried"],
        ["_id": "e", "name": "Élan_e", "price": true, "stock": -3, "tags": [1, "1", true, nil]],
        ["_id": "f", "store_id": nil, "name": "apple pie", "price": -0.5, "stock": 10, "meta": "none"],
        ["_id": "g", "store_id": "abc1234", "name": "Apple", "price": 1.5, "stock": 10.0, "tags": [["fruit"]]],
    ]

    static func path(_ text: String) -> DocumentPath {
        // The paths below are constants known to be valid.
        (try? DocumentPath(text)) ?? { preconditionFailure("invalid constant path \(text)") }()
    }

    /// Predicates with the ids they must match (computed by hand from the rules, not by the reference evaluator).
    static var expectations: [(DocumentPredicate, [String])] {
        [
            (.all, ["a", "b", "c", "d", "e", "f", "g"]),
            (.compare(path("store_id"), .equal, .string("abc123")), ["a", "b", "d"]),
            (.compare(path("store_id"), .notEqual, .string("abc123")), ["c", "e", "f", "g"]),
            (.compare(path("store_id"), .equal, .null), ["e", "f"]),
            (.compare(path("organic"), .equal, .null), ["c", "d", "e", "f", "g"]),
            (.compare(path("organic"), .equal, .bool(true)), ["a"]),
            (.compare(path("price"), .equal, .number(12)), ["c"]),
            (.compare(path("price"), .equal, .string("12")), ["d"]),
            (.compare(path("price"), .less, .number(1.5)), ["b", "f"]),
            (.compare(path("price"), .lessOrEqual, .number(1.5)), ["a", "b", "f", "g"]),
            (.compare(path("price"), .greater, .number(1)), ["a", "c", "g"]),
            (.compare(path("price"), .greaterOrEqual, .string("1")), ["d"]),
            (.compare(path("stock"), .equal, .number(10)), ["a", "f", "g"]),
            (.compare(path("name"), .greater, .string("a")), ["b", "d", "e", "f"]),
            (.compare(path("name"), .less, .string("B")), ["a", "g"]),
            (.compare(path("meta.origin.country"), .equal, .string("NZ")), ["a"]),
            (.compare(path("meta.origin.country"), .notEqual, .string("NZ")), ["b", "c", "d", "e", "f", "g"]),
            (.compare(path("price"), .less, .bool(true)), []),
            (.isIn(path("store_id"), [.string("xyz"), .null]), ["c", "e", "f"]),
            (.isIn(path("store_id"), []), []),
            (.contains(path("tags"), .string("fruit")), ["a", "b", "d"]),
            (.contains(path("tags"), .number(1)), ["e"]),
            (.contains(path("tags"), .string("1")), ["e"]),
            (.contains(path("tags"), .bool(true)), ["e"]),
            (.contains(path("tags"), .null), ["e"]),
            (.contains(path("name"), .string("pple")), ["a", "f", "g"]),
            (.like(path("name"), "Apple"), ["a", "g"]),
            (.like(path("name"), "apple%"), ["f"]),
            (.like(path("name"), "%e"), ["a", "e", "f", "g"]),
            (.like(path("name"), "_herry"), ["c"]),
            (.like(path("name"), "%100\\%"), ["d"]),
            (.like(path("name"), "%\\_e"), ["e"]),
            (.like(path("name"), "%"), ["a", "b", "c", "d", "e", "f", "g"]),
            (.not(.compare(path("stock"), .greater, .number(0))), ["b", "d", "e"]),
            (
                .and([
                    .compare(path("store_id"), .equal, .string("abc123")),
                    .compare(path("stock"), .greater, .number(5)),
                ]), ["a"]
            ),
            (
                .or([.compare(path("price"), .less, .number(0)), .compare(path("organic"), .equal, .bool(false))]),
                ["b", "f"]
            ),
            (.and([]), ["a", "b", "c", "d", "e", "f", "g"]),
            (.or([]), []),
            (
                .not(
                    .or([
                        .compare(path("store_id"), .equal, .string("abc123")),
                        .compare(path("store_id"), .equal, .null),
                    ])), ["c", "g"]
            ),
        ]
    }

    static let queryChecks: [DocumentStoreCheck] = [
        DocumentStoreCheck(
            "predicates",
            "each operator matches exactly the documents the rules say (types never coerce; missing is null)"
        ) { store in
            try await store.write { transaction in
                for document in queryDataset { try transaction.upsert(document, into: "items") }
            }
            for (predicate, expected) in expectations {
                let query = try DocumentQuery(collection: "items", predicate: predicate)
                let ids = try await store.documents(matching: query).map(\.id)
                try require(ids == expected, "\(predicate): expected \(expected), got \(ids)")
                let reference = query.apply(to: try queryDataset.map { try StoredDocument($0) }).map(\.id)
                try require(reference == expected, "the reference evaluator disagrees on \(predicate): \(reference)")
                let count = try await store.read { try $0.count(matching: query) }
                try require(count == expected.count, "\(predicate): count \(count), expected \(expected.count)")
            }
        },
        DocumentStoreCheck(
            "sort-limit-offset", "sort by type rank then value, then _id; limit and offset slice the sorted list"
        ) { store in
            try await store.write { transaction in
                for document in queryDataset { try transaction.upsert(document, into: "items") }
            }
            let cases: [([DocumentSort], Int?, Int, [String])] = [
                ([], nil, 0, ["a", "b", "c", "d", "e", "f", "g"]),
                ([DocumentSort(path("price"))], nil, 0, ["e", "f", "b", "a", "g", "c", "d"]),
                ([DocumentSort(path("price"), .descending)], nil, 0, ["d", "c", "a", "g", "b", "f", "e"]),
                (
                    [DocumentSort(path("stock"), .descending), DocumentSort(path("name"))], nil, 0,
                    ["a", "g", "f", "c", "b", "e", "d"]
                ),
                ([DocumentSort(path("name"))], 3, 1, ["g", "c", "f"]),
                ([DocumentSort(path("tags"))], nil, 0, ["f", "d", "a", "b", "c", "e", "g"]),
                ([DocumentSort(path("store_id"))], 2, 5, ["g", "c"]),
                ([DocumentSort(path("store_id"))], 0, 0, []),
                ([], nil, 10, []),
            ]
            for (sort, limit, offset, expected) in cases {
                let query = try DocumentQuery(collection: "items", sort: sort, limit: limit, offset: offset)
                let ids = try await store.documents(matching: query).map(\.id)
                try require(
                    ids == expected,
                    "sort \(sort) limit \(String(describing: limit)) offset \(offset): expected \(expected), got \(ids)"
                )
                let reference = query.apply(to: try queryDataset.map { try StoredDocument($0) }).map(\.id)
                try require(reference == expected, "the reference evaluator disagrees: \(reference)")
            }
        },
        DocumentStoreCheck(
            "query-bad-input",
            "negative limits, invalid paths and collection names are errors before the store is asked"
        ) { _ in
            try await expectError(.invalidQuery, "negative limit") {
                _ = try DocumentQuery(collection: "items", limit: -1)
            }
            try await expectError(.invalidQuery, "negative offset") {
                _ = try DocumentQuery(collection: "items", offset: -2)
            }
            try await expectError(.invalidQuery, "empty path part") { _ = try DocumentPath("a..b") }
            try await expectError(.invalidQuery, "quote in a path") { _ = try DocumentPath("a\"b") }
            try await expectError(.invalidCollectionName, "query collection") {
                _ = try DocumentQuery(collection: "x; --")
            }
        },
    ]
}
