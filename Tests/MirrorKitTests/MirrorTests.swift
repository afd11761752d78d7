import Foundation
import LiveQueryKit
import MirrorKit
import ResourceKit
import SQLiteAdapter
import Testing
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite("A resource mirrored into a collection", .timeLimit(minutes: 1))
struct MirrorTests {
    @Test(
        "A list is upserted by its id field; a refresh removes what it no longer holds, in one transaction",
        arguments: MirrorFixture.kinds)
    func listUpsertedAndPruned(kind: String) async throws {
        let fixture = try MirrorFixture(kind)
        let mirror = try fixture.service.resource("/items").mirror(
            into: fixture.store.collection("items"), id: "id", loadingIfNeeded: false)
        try await fixture.respond(
            "/items", itemsJSON([("a", "abc", "Pear"), ("b", "abc", "Fig"), ("c", "abc", "Kiwi")]), mirror: mirror)
        var documents = try await fixture.documents("items")
        #expect(documents.keys.sorted() == ["a", "b", "c"])
        #expect(documents["b"]?["name"] == "Fig")
        #expect(documents["b"]?["id"] == "b", "the id field stays in the document")

        let before = fixture.store.lastCommit
        try await fixture.respond(
            "/items", itemsJSON([("a", "abc", "Pear"), ("c", "abc", "Lime"), ("d", "abc", "Plum")]), mirror: mirror)
        documents = try await fixture.documents("items")
        #expect(documents.keys.sorted() == ["a", "c", "d"])
        #expect(documents["c"]?["name"] == "Lime")
        #expect(fixture.store.lastCommit == before + 1, "one transaction for the whole response")
        #expect(mirror.lastError == nil)
    }

    @Test(
        "Two mirrors with different scopes share a collection and never remove each other's documents",
        arguments: MirrorFixture.kinds)
    func scopesKeepApart(kind: String) async throws {
        let fixture = try MirrorFixture(kind)
        let items = fixture.store.collection("items")
        let abc = try fixture.service.resource("/stores/abc/items").mirror(
            into: items, id: "id", scope: "store_id == 'abc'", loadingIfNeeded: false)
        let xyz = try fixture.service.resource("/stores/xyz/items").mirror(
            into: items, id: "id", scope: "store_id == 'xyz'", loadingIfNeeded: false)
        try await fixture.respond(
            "/stores/abc/items", itemsJSON([("a1", "abc", "Pear"), ("a2", "abc", "Fig")]), mirror: abc)
        try await fixture.respond("/stores/xyz/items", itemsJSON([("x1", "xyz", "Kiwi")]), mirror: xyz)
        try await fixture.respond("/stores/abc/items", "[]", mirror: abc)
        #expect(try await fixture.documents("items").keys.sorted() == ["x1"])
        try await fixture.respond("/stores/xyz/items", itemsJSON([("x2", "xyz", "Lime")]), mirror: xyz)
        #expect(try await fixture.documents("items").keys.sorted() == ["x2"])
    }

    @Test("A list and a detail reach one document: each updates the other's live query", arguments: MirrorFixture.kinds)
    func normalizedEntities(kind: String) async throws {
        let fixture = try MirrorFixture(kind)
        let items = fixture.store.collection("items")
        let list = try fixture.service.resource("/items").mirror(into: items, id: "id", loadingIfNeeded: false)
        let detail = try fixture.service.resource("/items/b").mirror(into: items, id: "id", loadingIfNeeded: false)
        let names = LockedValue<[String: String]>([:])
        let liveQuery = try items.findAll().observeLocal { documents, _ in
            names.withLock { names in
                names = Dictionary(uniqueKeysWithValues: documents.map { ($0.id, $0.string("name") ?? "") })
            }
        }
        try await fixture.respond("/items", itemsJSON([("a", "abc", "Pear"), ("b", "abc", "Fig")]), mirror: list)
        try await fixture.respond("/items/b", #"{"id":"b","store_id":"abc","name":"Fig, dried"}"#, mirror: detail)
        await fixture.store.waitForLiveQueries()
        try await eventually { names.withLock { $0 } == ["a": "Pear", "b": "Fig, dried"] }
        #expect(try await fixture.documents("items").count == 2, "the detail is the list's document, not a copy")

        try await fixture.respond(
            "/items", itemsJSON([("a", "abc", "Pear"), ("b", "abc", "Fig, fresh")]), mirror: list)
        let detailQuery = try await items.findByID("b").exec()
        #expect(detailQuery?.string("name") == "Fig, fresh")
        try await eventually { names.withLock { $0 }["b"] == "Fig, fresh" }
        await liveQuery.stop()
    }

    @Test("The documents can sit at a path in the response", arguments: MirrorFixture.kinds)
    func path(kind: String) async throws {
        let fixture = try MirrorFixture(kind)
        let mirror = try fixture.service.resource("/page").mirror(
            into: fixture.store.collection("items"), id: "key", path: "data.items", loadingIfNeeded: false)
        try await fixture.respond(
            "/page", #"{"data":{"items":[{"key":"k1","n":1},{"key":"k2","n":2}],"next":null}}"#, mirror: mirror)
        #expect(try await fixture.documents("items").keys.sorted() == ["k1", "k2"])
    }

    @Test(
        "A 304 writes nothing; a response equal to the last writes only the mirror's state",
        arguments: MirrorFixture.kinds)
    func notModifiedWritesNothing(kind: String) async throws {
        let fixture = try MirrorFixture(kind)
        let items = fixture.store.collection("items")
        let mirror = try fixture.service.resource("/items").mirror(into: items, id: "id", loadingIfNeeded: false)
        try await fixture.respond(
            "/items", itemsJSON([("a", "abc", "Pear")]), headers: ["ETag": "\"v1\""], mirror: mirror)
        let evaluations = LockedValue(0)
        let liveQuery = try items.findAll().observeLocal { _, _ in evaluations.withLock { $0 += 1 } }
        await fixture.store.waitForLiveQueries()
        let commit = fixture.store.lastCommit

        fixture.transport.enqueue(.get, base + "/items", .status(304))
        let resource = fixture.service.resource("/items")
        _ = await resource.load().outcome
        // A later event to wait for: another write, which does go through.
        try await fixture.store.collection("other").upsert(["_id": "marker"])
        #expect(fixture.store.lastCommit == commit + 1, "the 304 made no commit")
        #expect(mirror.completedWrites == 1)

        fixture.clock.advance(by: .seconds(60))
        try await fixture.respond(
            "/items", itemsJSON([("a", "abc", "Pear")]), headers: ["ETag": "\"v1\""], mirror: mirror)
        await fixture.store.waitForLiveQueries()
        #expect(evaluations.withLock { $0 } == 1, "the live query saw no change: only its first result")
        let state = try #require(try await fixture.state(mirror))
        #expect(state.syncedAt == Date(timeIntervalSince1970: 1060))
        #expect(state.etag == "\"v1\"")
        await liveQuery.stop()
    }

    @Test(
        "The mirror's state: when the data was received, its ETag, and the resource's error, kept with the data",
        arguments: MirrorFixture.kinds)
    func state(kind: String) async throws {
        let fixture = try MirrorFixture(kind)
        let mirror = try fixture.service.resource("/items").mirror(
            into: fixture.store.collection("items"), id: "id", name: "items of abc", loadingIfNeeded: false)
        try await fixture.respond(
            "/items", itemsJSON([("a", "abc", "Pear"), ("b", "abc", "Fig")]), headers: ["ETag": "\"v7\""],
            mirror: mirror)
        var state = try #require(try await fixture.state(mirror))
        #expect(state.name == "items of abc")
        #expect(state.url == base + "/items")
        #expect(state.mirroredCollection == "items")
        #expect(state.syncedAt == Date(timeIntervalSince1970: 1000))
        #expect(state.etag == "\"v7\"")
        #expect(state.documentCount == 2)
        #expect(state.error == nil)
        #expect(mirror.lastSyncCommit != nil)

        fixture.clock.advance(by: .seconds(300))
        try await fixture.respond("/items", "oops", status: 500, mirror: mirror)
        state = try #require(try await fixture.state(mirror))
        #expect(state.error?.contains("500") == true, "\(state.error ?? "no error")")
        #expect(state.errorAt == Date(timeIntervalSince1970: 1300), "when the resource failed, by its clock")
        #expect(state.syncedAt == Date(timeIntervalSince1970: 1000), "the last good sync stays")
        #expect(try await fixture.documents("items").count == 2, "an error removes nothing")

        try await fixture.respond("/items", itemsJSON([("a", "abc", "Pear")]), mirror: mirror)
        state = try #require(try await fixture.state(mirror))
        #expect(state.error == nil)
        #expect(state.syncedAt == Date(timeIntervalSince1970: 1300))

        // Failing again, then a 304: the server confirms the data, so the state says so — one write, of the state.
        fixture.clock.advance(by: .seconds(60))
        try await fixture.respond("/items", "oops", status: 500, mirror: mirror)
        #expect(try await fixture.state(mirror)?.error != nil)
        let commit = fixture.store.lastCommit
        let writes = mirror.completedWrites
        fixture.transport.enqueue(.get, base + "/items", .status(304))
        _ = await fixture.service.resource("/items").load().outcome
        try await eventually { mirror.completedWrites > writes }
        state = try #require(try await fixture.state(mirror))
        #expect(state.error == nil && state.errorAt == nil, "a 304 after a failure clears it")
        #expect(fixture.store.lastCommit == commit + 1, "the state alone was written")
        #expect(try await fixture.documents("items").keys.sorted() == ["a"])
    }

    @Test(
        "Server data older than what was written is not written: the later response wins by its timestamp",
        arguments: MirrorFixture.kinds)
    func laterResponseWins(kind: String) async throws {
        let late = try MirrorFixture(kind, clock: ManualTimeSource(now: Date(timeIntervalSince1970: 2000)))
        let early = MirrorFixture(store: late.store, clock: ManualTimeSource(now: Date(timeIntervalSince1970: 1500)))
        let items = late.store.collection("items")
        let newer = try late.service.resource("/items").mirror(
            into: items, id: "id", name: "items", loadingIfNeeded: false)
        let older = try early.service.resource("/items").mirror(
            into: items, id: "id", name: "items", loadingIfNeeded: false)
        try await late.respond("/items", itemsJSON([("a", "abc", "Pear, newer")]), mirror: newer)
        try await early.respond("/items", itemsJSON([("a", "abc", "Pear, older"), ("b", "abc", "Fig")]), mirror: older)
        let documents = try await late.documents("items")
        #expect(documents.keys.sorted() == ["a"])
        #expect(documents["a"]?["name"] == "Pear, newer")
        #expect(try await late.state(newer)?.syncedAt == Date(timeIntervalSince1970: 2000))
    }

    @Test(
        "A local override and a mutation's optimistic layer are mirrored, and so is its rollback",
        arguments: MirrorFixture.kinds)
    func localData(kind: String) async throws {
        let fixture = try MirrorFixture(kind)
        let resource = fixture.service.resource("/items")
        let mirror = try resource.mirror(into: fixture.store.collection("items"), id: "id", loadingIfNeeded: false)
        try await fixture.respond("/items", itemsJSON([("a", "abc", "Pear")]), mirror: mirror)
        let before = mirror.completedWrites
        resource.overrideLocalContent(
            with: try JSONValue(parsing: itemsJSON([("a", "abc", "Pear"), ("z", "abc", "Local")])))
        try await eventually { mirror.completedWrites > before }
        #expect(try await fixture.documents("items").keys.sorted() == ["a", "z"])

        // The server answers once the clock moves: the optimistic layer is written before the refusal arrives (a
        // refusal at once could replace it while it waits to be written: only the newest data waits).
        fixture.transport.route(.post, base + "/items", reply: .status(422, delay: .seconds(5)))
        let mutation = resource.mutate(
            .post, json: ["id": "n", "name": "New"],
            optimistic: .updating { (content: JSONValue?) -> JSONValue in
                .array((content?.arrayValue ?? []) + [["id": "n", "store_id": "abc", "name": "New"]])
            })
        try await eventually { try await fixture.documents("items")["n"] != nil }
        #expect(await fixture.clock.waitForSleepers(1))
        fixture.clock.advance(by: .seconds(5))
        _ = await mutation.outcome
        try await eventually { try await fixture.documents("items")["n"] == nil }
        #expect(try await fixture.documents("items").keys.sorted() == ["a", "z"], "rolled back in the store too")
    }

    @Test("Offline: a store reopened from its file serves the last-known data at once; the mirror records the failure")
    func offline() async throws {
        let path = try MirrorFixture.temporaryPath()
        do {
            let fixture = MirrorFixture(store: Store(try SQLiteDocumentStore(path: path)))
            let mirror = try fixture.service.resource("/items").mirror(
                into: fixture.store.collection("items"), id: "id", loadingIfNeeded: false)
            try await fixture.respond("/items", itemsJSON([("a", "abc", "Pear"), ("b", "abc", "Fig")]), mirror: mirror)
        }
        let fixture = MirrorFixture(
            store: Store(try SQLiteDocumentStore(path: path)),
            clock: ManualTimeSource(now: Date(timeIntervalSince1970: 5000)))
        fixture.transport.route(.get, base + "/items", reply: .failure(.connectionRefused))
        let first = LockedValue<[String]?>(nil)
        let liveQuery = try fixture.store.collection("items").findAll().sort("name").observeLocal { documents, _ in
            first.withLock { if $0 == nil { $0 = documents.compactMap { $0.string("name") } } }
        }
        try await eventually { first.withLock { $0 } != nil }
        #expect(first.withLock { $0 } == ["Fig", "Pear"], "the last-known state, before any network")
        let mirror = try fixture.service.resource("/items").mirror(into: fixture.store.collection("items"), id: "id")
        try await eventually { mirror.completedWrites >= 1 }
        let state = try #require(try await fixture.state(mirror))
        #expect(state.error != nil)
        #expect(state.syncedAt == Date(timeIntervalSince1970: 1000), "last updated when the previous process synced")
        #expect(try await fixture.documents("items").count == 2)
        await liveQuery.stop()
    }

    @Test("A released mirror writes nothing more, and leaves nothing behind")
    func releasedMirror() async throws {
        let fixture = try MirrorFixture("memory")
        let items = fixture.store.collection("items")
        var mirror: ResourceMirror? = try fixture.service.resource("/items").mirror(
            into: items, id: "id", loadingIfNeeded: false)
        try await fixture.respond("/items", itemsJSON([("a", "abc", "Pear")]), mirror: mirror!)
        weak let released = mirror
        mirror = nil
        try await eventually { released == nil }
        // Another mirror of the same resource, into another collection: its write is the later event.
        let other = try fixture.service.resource("/items").mirror(
            into: fixture.store.collection("copy"), id: "id", loadingIfNeeded: false)
        await other.waitForWrites()  // what the resource held when the mirror began: "a"
        try await fixture.respond("/items", itemsJSON([("b", "abc", "Fig")]), mirror: other)
        #expect(try await fixture.documents("items").keys.sorted() == ["a"])
        #expect(try await fixture.documents("copy").keys.sorted() == ["b"], "the list replaced what it held")
    }
}
