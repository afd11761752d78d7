import Foundation
import ResourceKit
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

struct User: Decodable, Sendable, Equatable {
    let id: Int
    let name: String
}

@Suite("Configuration and the response pipeline", .leakChecked)
struct PipelineTests {
    @Test("Standard transformers: text with its charset, JSON, and unknown types left as Data")
    func standard() async {
        await withFixture { fixture in
            fixture.route(
                "/latin",
                .init(
                    headers: ["Content-Type": "text/plain; charset=ISO-8859-1"], body: Data([0x63, 0x61, 0x66, 0xE9])))
            fixture.route("/problem", .json(#"{"title": "x"}"#, headers: ["Content-Type": "application/problem+json"]))
            fixture.route("/blob", .init(headers: ["Content-Type": "image/png"], body: Data([1, 2, 3])))
            let service = fixture.service
            _ = await service.resource("/latin").load().outcome
            _ = await service.resource("/problem").load().outcome
            _ = await service.resource("/blob").load().outcome
            #expect(service.resource("/latin").text == "café")
            #expect(service.resource("/problem").json?["title"] == .string("x"))
            #expect(service.resource("/blob").typedContent(as: Data.self) == Data([1, 2, 3]))
        }
    }

    @Test("A Decodable model stage decodes; a body that does not match fails naming the path, and keeps the data")
    func models() async throws {
        try await withFixture { fixture in
            fixture.service.configureModel(User.self, for: "/users/*")
            fixture.enqueue("/users/1", .json(#"{"id": 1, "name": "Ada"}"#), .json(#"{"id": "one", "name": "Ada"}"#))
            let user = fixture.service.resource("/users/1")
            _ = await user.load().outcome
            #expect(user.typedContent(as: User.self) == User(id: 1, name: "Ada"))
            let error = try #require(await user.load().outcome.error)
            #expect(error.kind == .transformFailed(.model))
            #expect(error.message.contains("User") && error.message.contains(".id"), "\(error.message)")
            #expect(user.latestError?.kind == .transformFailed(.model))
            #expect(user.typedContent(as: User.self) == User(id: 1, name: "Ada"))
        }
    }

    @Test("A stage whose transformer throws fails the load at that stage; a wrong input type says which")
    func failingStage() async throws {
        try await withFixture { fixture in
            struct Refused: Error, CustomStringConvertible { var description: String { "refused" } }
            fixture.service.configureTransformer("/refuse", atStage: .cleanup) { (_: JSONValue, _) -> String? in
                throw Refused()
            }
            fixture.service.configureTransformer("/typed") { (number: Int, _) -> String? in "\(number)" }
            fixture.route("/refuse", .json("{}"))
            fixture.route("/typed", .json("{}"))
            let refuse = try #require(await fixture.service.resource("/refuse").load().outcome.error)
            #expect(refuse.kind == .transformFailed(.cleanup))
            #expect(refuse.message == "the cleanup stage failed: refused")
            let typed = try #require(await fixture.service.resource("/typed").load().outcome.error)
            #expect(typed.message.contains("expected content of type Int, got JSONValue"), "\(typed.message)")

            fixture.service.configureTransformer("/nothing") { (_: JSONValue, _) -> String? in nil }
            fixture.route("/nothing", .json("{}"))
            let nothing = try #require(await fixture.service.resource("/nothing").load().outcome.error)
            #expect(nothing.message == "the model stage failed: the transformer from JSONValue to String returned nil")
            #expect(nothing.url == base + "/nothing")
        }
    }

    @Test("Invalid JSON and undecodable text are typed errors at the parsing stage")
    func badBodies() async throws {
        try await withFixture { fixture in
            fixture.route("/json", .json("{not json"))
            fixture.route("/utf8", .init(headers: ["Content-Type": "text/plain"], body: Data([0xFF, 0xFE, 0x41])))
            fixture.route(
                "/charset", .init(headers: ["Content-Type": "text/plain; charset=klingon"], body: Data("x".utf8)))
            for (path, fragment) in [
                ("/json", "not valid JSON"), ("/utf8", "not valid UTF-8"), ("/charset", "klingon"),
            ] {
                let error = try #require(await fixture.service.resource(path).load().outcome.error)
                #expect(error.kind == .transformFailed(.parsing))
                #expect(error.message.contains(fragment), "\(error.message)")
            }
        }
    }

    @Test("Patterns: * within a segment, ** across, queries ignored, per method; rules apply in order")
    func patterns() async {
        await withFixture { fixture in
            let service = fixture.service
            service.configure("/items/*") { $0.expirationTime = .seconds(60) }
            service.configure("/deep/**") { $0.expirationTime = .seconds(70) }
            service.configure("/items/special") { $0.expirationTime = .seconds(80) }
            service.configure("/items/*", requestMethods: [.post]) { $0.timeout = .seconds(5) }
            service.configure(.matching { $0.query?.contains("fresh") == true }) { $0.expirationTime = .zero }
            #expect(service.resource("/items/1").configuration().expirationTime == .seconds(60))
            #expect(service.resource("/items/1").withParam("a", "b").configuration().expirationTime == .seconds(60))
            #expect(service.resource("/items/1/tags").configuration().expirationTime == .seconds(30))
            #expect(service.resource("/deep/a/b/c").configuration().expirationTime == .seconds(70))
            #expect(service.resource("/items/special").configuration().expirationTime == .seconds(80))
            #expect(service.resource("/items/1").configuration(for: .post).timeout == .seconds(5))
            #expect(service.resource("/items/1").configuration(for: .get).timeout == .seconds(60))
            #expect(service.resource("/x").withParam("fresh", "1").configuration().expirationTime == .zero)
            #expect(
                service.resource(absoluteURL: "https://other.example.com/items/1").configuration().expirationTime
                    == .seconds(30))
        }
    }

    @Test("Headers and request mutations reach the transport; invalidateConfiguration recomputes")
    func headersAndMutations() async {
        await withFixture { fixture in
            let token = TokenBox("a")
            fixture.service.configure { [token] in
                $0.headers["Authorization"] = "Bearer \(token.value)"
                $0.mutateRequests { $0.url = URL(string: $0.url.absoluteString + "?signed=1")! }
            }
            fixture.transport.route(base + "/me?signed=1", reply: .json("{}"))
            _ = await fixture.service.resource("/me").load().outcome
            token.value = "b"
            fixture.service.invalidateConfiguration()
            _ = await fixture.service.resource("/me").load().outcome
            #expect(fixture.transport.requests.map { $0.headers["authorization"] } == ["Bearer a", "Bearer b"])
            #expect(fixture.service.resource("/me").latestError == nil)
        }
    }
}

final class TokenBox: Sendable {
    private let storage: LockedValue<String>
    init(_ value: String) { storage = LockedValue(value) }
    var value: String {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
