import DocumentStoreKit
import PersistenceKit
import TetherJSON

extension DocumentStoreConformance {
    static let indexChecks: [DocumentStoreCheck] = [
        DocumentStoreCheck(
            "declared-indexes",
            "an index is declared once however often it is created, listed in order, and changes no query's result"
        ) { store in
            try await store.write { transaction in
                for index in 0..<60 {
                    try transaction.upsert(
                        [
                            "_id": .string("d\(index)"), "group": .string("g\(index % 6)"),
                            "rank": index % 7 == 0 ? .string("top") : .number(Double(index % 11)),
                            "place": ["city": .string("c\(index % 4)")],
                        ], into: "things")
                }
            }
            let queries = try [
                DocumentQuery(
                    collection: "things", predicate: .compare(DocumentPath("group"), .equal, .string("g2")),
                    sort: [DocumentSort(DocumentPath("rank"), .descending)], limit: 5),
                DocumentQuery(
                    collection: "things",
                    predicate: .and([
                        .isIn(DocumentPath("group"), [.string("g1"), .string("g4"), .null]),
                        .compare(DocumentPath("rank"), .greaterOrEqual, .number(3)),
                    ])),
                DocumentQuery(
                    collection: "things", predicate: .compare(DocumentPath("place.city"), .notEqual, .string("c1")),
                    offset: 2),
            ]
            var before: [[StoredDocument]] = []
            for query in queries { before.append(try await store.read { try $0.documents(matching: query) }) }
            let first = try DocumentIndex(collection: "things", fields: ["group", "rank"])
            let second = try DocumentIndex(collection: "things", fields: ["place.city"])
            try await store.createIndex(first)
            try await store.createIndex(second)
            try await store.createIndex(first)
            let declared = try await store.declaredIndexes().filter { $0.collection == "things" }
            try require(declared == [first, second], "declared \(declared), expected [\(first), \(second)]")
            for (query, expected) in zip(queries, before) {
                let after = try await store.read { try $0.documents(matching: query) }
                try require(
                    after == expected,
                    "\(query.predicate): \(after.map(\.id)) after the index, \(expected.map(\.id)) before")
            }
        }
    ]
}
