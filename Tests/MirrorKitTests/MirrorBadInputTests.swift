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

/// Responses a mirror cannot take: each is refused whole, with a typed error that says where, and the collection
/// keeps what the last good response left.
@Suite("A mirror refuses bad responses whole, and says where", .timeLimit(minutes: 5))
struct MirrorBadInputTests {
    /// A fixture whose mirror of `/items` (documents at `path`) holds `a` and `b` from a good response.
    private func mirrored(_ kind: String, path: String? = nil, wrap: (String) -> String = { $0 }) async throws
        -> (MirrorFixture, ResourceMirror)
    {
        let fixture = try MirrorFixture(kind)
        let mirror = try fixture.service.resource("/items").mirror(
            into: fixture.store.collection("items"), id: "id", path: path, loadingIfNeeded: false)
        try await fixture.respond(
            "/items", wrap(itemsJSON([("a", "abc", "Pear"), ("b", "abc", "Fig")])), mirror: mirror)
        #expect(mirror.lastError == nil)
        return (fixture, mirror)
    }

    /// Responds with `json`, and expects a refusal of `kind` whose description holds `context`, nothing written,
    /// and the error in the mirror's state.
    private func expectRefused(
        _ json: String, kind: MirrorError.Kind, context: [String], fixture: MirrorFixture, mirror: ResourceMirror,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let commit = fixture.store.lastCommit
        fixture.clock.advance(by: .seconds(10))
        try await fixture.respond("/items", json, mirror: mirror)
        let error = try #require(mirror.lastError as? MirrorError, sourceLocation: sourceLocation)
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        for piece in context {
            #expect(error.description.contains(piece), "\(error) lacks \(piece)", sourceLocation: sourceLocation)
        }
        #expect(
            try await fixture.documents("items").keys.sorted() == ["a", "b"], "nothing of it is written",
            sourceLocation: sourceLocation)
        #expect(try await fixture.documents("items")["a"]?["name"] == "Pear", sourceLocation: sourceLocation)
        let state = try #require(try await fixture.state(mirror), sourceLocation: sourceLocation)
        #expect(state.error == error.description, sourceLocation: sourceLocation)
        #expect(
            state.syncedAt == Date(timeIntervalSince1970: 1000), "the last good sync", sourceLocation: sourceLocation)
        #expect(fixture.store.lastCommit == commit + 1, "one commit: the state's error", sourceLocation: sourceLocation)
    }

    @Test("What the path leads to is neither an array nor an object", arguments: MirrorFixture.kinds)
    func notArrayOrObject(kind: String) async throws {
        let (fixture, mirror) = try await mirrored(kind, path: "data.items") { #"{"data":{"items":\#($0)}}"# }
        try await expectRefused(
            #"{"data":{"items":"none"}}"#, kind: .notArrayOrObject,
            context: ["at data.items", "string", base + "/items"],
            fixture: fixture, mirror: mirror)
        try await expectRefused(
            #"{"data":{"items":[{"id":"a"}, 7]}}"#, kind: .notArrayOrObject, context: ["element 1", "number"],
            fixture: fixture, mirror: mirror)
    }

    @Test("The path is missing from the response", arguments: MirrorFixture.kinds)
    func missingPath(kind: String) async throws {
        let (fixture, mirror) = try await mirrored(kind, path: "data.items") { #"{"data":{"items":\#($0)}}"# }
        try await expectRefused(
            #"{"data":{"rows":[]}}"#, kind: .missingPath, context: ["\"items\" in data", "path data.items"],
            fixture: fixture, mirror: mirror)
    }

    @Test("A document without its id, or with an id that is not a non-empty string", arguments: MirrorFixture.kinds)
    func invalidIDs(kind: String) async throws {
        let (fixture, mirror) = try await mirrored(kind)
        try await expectRefused(
            #"[{"id":"a","name":"Pear, new"},{"name":"no id"}]"#, kind: .invalidID,
            context: ["element 1 has no id \"id\""], fixture: fixture, mirror: mirror)
        try await expectRefused(
            #"[{"id":"a"},{"id":"b"},{"id":42}]"#, kind: .invalidID, context: ["element 2", "42"], fixture: fixture,
            mirror: mirror)
        try await expectRefused(
            #"[{"id":""}]"#, kind: .invalidID, context: ["element 0", "\"\""], fixture: fixture, mirror: mirror)
    }

    @Test("Two elements with the same id", arguments: MirrorFixture.kinds)
    func duplicateIDs(kind: String) async throws {
        let (fixture, mirror) = try await mirrored(kind)
        try await expectRefused(
            #"[{"id":"a","name":"one"},{"id":"c"},{"id":"a","name":"two"}]"#, kind: .duplicateID,
            context: ["elements 0 and 2", "id a"], fixture: fixture, mirror: mirror)
    }

    @Test(
        "A document deeper than the store takes (from a local override: JSON text that deep does not parse): refused with its id, and none of the response written",
        arguments: MirrorFixture.kinds)
    func tooDeep(kind: String) async throws {
        let (fixture, mirror) = try await mirrored(kind)
        let commit = fixture.store.lastCommit
        var deep = JSONValue.array([])
        for _ in 0..<600 { deep = .array([deep]) }
        let before = mirror.completedWrites
        fixture.service.resource("/items").overrideLocalContent(
            with: JSONValue.array([["id": "a", "name": "Pear, changed"], ["id": "c"], ["id": "deep", "value": deep]]))
        try await eventually { mirror.completedWrites > before }
        let error = try #require(mirror.lastError as? MirrorError)
        #expect(error.kind == .unstorableDocument)
        for piece in ["id deep", "element 2", "deeper"] { #expect(error.description.contains(piece), "\(error)") }
        #expect(try await fixture.documents("items").keys.sorted() == ["a", "b"], "nothing of it is written")
        #expect(try await fixture.documents("items")["a"]?["name"] == "Pear")
        #expect(try await fixture.state(mirror)?.error == error.description)
        #expect(fixture.store.lastCommit == commit + 1, "one commit: the state's error")
    }

    @Test("Content that is not JSON", arguments: MirrorFixture.kinds)
    func notJSON(kind: String) async throws {
        let (fixture, mirror) = try await mirrored(kind)
        let commit = fixture.store.lastCommit
        fixture.transport.enqueue(.get, base + "/items", .text("a,b,c"))
        let before = mirror.completedWrites
        _ = await fixture.service.resource("/items").load().outcome
        try await eventually { mirror.completedWrites > before }
        let error = try #require(mirror.lastError as? MirrorError)
        #expect(error.kind == .notJSON)
        #expect(error.description.contains("text/plain"))
        #expect(try await fixture.documents("items").count == 2)
        #expect(fixture.store.lastCommit == commit + 1)
    }

    @Test("A scope that is not a query fails when the mirror is made, with the column")
    func invalidScope() throws {
        let fixture = try MirrorFixture("memory")
        let error = #expect(throws: MirrorError.self) {
            try fixture.service.resource("/items").mirror(
                into: fixture.store.collection("items"), id: "id", scope: "store_id == == 'abc'")
        }
        #expect(error?.kind == .invalidScope)
        #expect(error?.description.contains("column") == true, "\(String(describing: error))")
        #expect(error?.url == base + "/items")
    }

    /// Every core busy for seconds (a debug build writes 100,000 documents to SQLite): never beside a test that
    /// needs processor time, and a deadline for correctness, not speed.
    @Test(
        "100,000 documents in one response: one transaction, one commit a live query sees", .loadsEveryCore,
        arguments: MirrorFixture.kinds)
    func largeResponse(kind: String) async throws {
        let fixture = try MirrorFixture(kind)
        let items = fixture.store.collection("items")
        let mirror = try fixture.service.resource("/items").mirror(into: items, id: "id", loadingIfNeeded: false)
        let commits = LockedValue<[UInt64]>([])
        let liveQuery = try items.find("n >= 99990").observeLocal { documents, _ in
            commits.withLock { $0.append(UInt64(documents.count)) }
        }
        try await eventually { commits.withLock { $0.count } == 1 }
        let before = fixture.store.lastCommit
        let json = "[" + (0..<100_000).map { #"{"id":"i\#($0)","n":\#($0)}"# }.joined(separator: ",") + "]"
        try await fixture.respond("/items", json, mirror: mirror, within: .seconds(300))
        #expect(mirror.lastError == nil)
        #expect(fixture.store.lastCommit == before + 1, "one commit")
        await fixture.store.waitForLiveQueries()
        try await eventually(within: .seconds(300)) { commits.withLock { $0.count } == 2 }
        #expect(commits.withLock { $0 } == [0, 10], "the first result, then one update")
        #expect(try await items.findAll().exec().count == 100_000)
        await liveQuery.stop()
    }
}
