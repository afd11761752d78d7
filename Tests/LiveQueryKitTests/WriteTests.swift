import LiveQueryKit
import PersistenceKit
import Testing
import TetherJSON
import TetherTestingTraits

@Suite(
    "Writing: upsert, insert, remove, find().update, find().remove, store.write, Document", .timeLimit(minutes: 1),
    .leakChecked)
struct WriteTests {
    struct Item: Decodable, Equatable {
        let _id: String
        let name: String
        let price: Double
    }

    @Test("Writes and reads, on both stores", arguments: TestStores.kinds)
    func writes(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let generated = try await items.upsert(["name": "no id", "price": 1])
        #expect(generated.count == 36, "a UUID _id is generated: \(generated)")
        try await items.insert(["_id": "a", "name": "Apple", "price": 2, "address": ["city": "Oslo"]])
        await #expect { try await items.insert(["_id": "a"]) } throws: {
            ($0 as? PersistenceError)?.kind == .duplicateID
        }
        let apple = try #require(try await items.findByID("a").exec())
        #expect(apple.string("name") == "Apple")
        #expect(apple["address.city"] == "Oslo")
        #expect(apple.double("price") == 2)
        #expect(try apple.decode(as: Item.self) == Item(_id: "a", name: "Apple", price: 2))

        let changed = try await items.find("price >= $args.p", args: ["p": 2]).update { document in
            document = .object((document.objectValue ?? [:]).merging(["price": 3]) { $1 })
        }
        #expect(changed == ["a"])
        #expect(try await items.findByID("a").exec()?.double("price") == 3)
        await #expect(throws: PersistenceError.self) {
            try await items.findByID("a").update { $0 = ["_id": "b"] }
        }
        #expect(try await items.findByID("a").exec() != nil, "a failed update changes nothing")

        try await store.write { transaction in
            try transaction.collection("orders").upsert(["_id": "o1", "item": "a"])
            try transaction.collection("items").remove(id: "a")
            #expect(try transaction.collection("orders").find("item == 'a'").count == 1)
        }
        #expect(try await items.findByID("a").exec() == nil)
        #expect(try await store.collection("orders").findAll().exec().count == 1)
        #expect(try await items.find("price < 5").remove() == [generated])
        #expect(try await items.findAll().exec().isEmpty)
    }

    @Test("Bad input: invalid collection names and queries fail before anything is observed or written")
    func badInput() async throws {
        let store = Store.inMemory()
        await #expect(throws: PersistenceError.self) { try await store.collection("bad name").upsert(["_id": "a"]) }
        #expect(throws: PersistenceError.self) { try store.collection("bad;name").findAll().observeLocal { _, _ in } }
        #expect(throws: QueryError.self) { try store.collection("items").find("a ==").observeLocal { _, _ in } }
        #expect(throws: QueryError.self) {
            try store.collection("items").findAll().sort("a..b").observeLocal { _, _ in }
        }
        await #expect(throws: QueryError.self) { try await store.collection("items").findAll().limit(-1).exec() }
        #expect(store.statistics.observers == 0)
    }
}
