import AsyncHTTPClientAdapter
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import LoopbackServer
import NIOCore
import ResourceKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits
import TransportKit

/// Mutations over a real HTTP exchange: AsyncHTTPClient against a Hummingbird server on loopback that keeps a list
/// of names. What the wire adds to the in-memory tests: JSON bodies through the real pipeline, a `204` with no body,
/// a status the server refuses with, and a server that answers only when the test lets it.
@Suite("Resource mutations over HTTP on loopback", .needsProcessorTime, .timeLimit(minutes: 2))
struct ResourceMutationTests {
    @Test("PUT, POST and DELETE with optimistic updates: shown at once, settled by the server, a refusal rolled back")
    func mutationsOverHTTP() async throws {
        let names = LockedValue(["ada"])
        let requests = LockedValue(0)
        let gate = AsyncGate()
        let server = try await LoopbackServer.start(
            serverName: "mutations", logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        ) { request in
            try await Self.respond(to: request, names: names, requests: requests, gate: gate)
        }
        let transport = AsyncHTTPClientTransport()
        let service = Service(baseURL: server.baseURL, transport: transport)
        let list = service.resource("/names")
        #expect(try await list.loadedData().typedContent(as: JSONValue.self) == ["ada"])

        // POST, answered only when the gate opens: the optimistic name shows meanwhile, then the reload's list.
        let post = list.mutate(
            .post, text: "grace",
            optimistic: .updating { (list: JSONValue?) in .array((list?.arrayValue ?? []) + ["grace"]) })
        #expect(list.json == ["ada", "grace"])
        gate.open()
        #expect(await post.outcome.error == nil)
        _ = await list.loadRequests.first?.outcome
        #expect(list.json == ["ada", "grace"] && list.latestError == nil)

        // PUT answered with the stored list: it becomes the data in one step, with no reload.
        let requestsBefore = requests.withLock { $0 }
        let put = await list.mutate(
            .put, json: ["ada", "grace", "linus"],
            optimistic: .replacing(with: ["ada", "grace", "linus"] as JSONValue),
            onSuccess: .useResponse
        ).outcome
        #expect(put.entity?.typedContent(as: JSONValue.self) == ["ada", "grace", "linus"])
        #expect(list.json == ["ada", "grace", "linus"] && list.isUpToDate)
        #expect(requests.withLock { $0 } == requestsBefore + 1, "the response saved a reload")

        // A refused POST (422) is rolled back; a DELETE answered 204 leaves the list stale.
        let refused = await list.mutate(
            .post, text: "",
            optimistic: .updating { (list: JSONValue?) in .array((list?.arrayValue ?? []) + [""]) }
        ).outcome
        #expect(refused.error?.httpStatusCode == 422)
        #expect(list.json == ["ada", "grace", "linus"])
        let deleted = await list.mutate(.delete, text: "ada", onSuccess: .useResponse).outcome
        #expect(deleted.error == nil)
        #expect(!list.isUpToDate && !list.isLoading, "no body to use, nobody observing: stale, loaded when needed")
        _ = await list.loadIfNeeded()?.outcome
        #expect(list.json == ["grace", "linus"])

        try await transport.shutdown()
        await server.stop()
    }

    /// The list's server: `GET` answers it; `POST` appends a non-empty name (after the gate, the first time) and
    /// answers 201 with the name; `PUT` replaces the list and answers it; `DELETE` removes a name and answers 204.
    private static func respond(
        to request: Request, names: LockedValue<[String]>, requests: LockedValue<Int>, gate: AsyncGate
    ) async throws -> Response {
        requests.withLock { $0 += 1 }
        var request = request
        let body = String(buffer: try await request.collectBody(upTo: 1 << 20))
        switch request.method {
        case .get:
            return json(names.withLock { $0 })
        case .post:
            await gate.pass()
            guard !body.isEmpty else { return Response(status: .unprocessableContent) }
            names.withLock { $0.append(body) }
            return Response(status: .created, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        case .put:
            let list = try JSONDecoder().decode([String].self, from: Data(body.utf8))
            names.withLock { $0 = list }
            return json(list)
        case .delete:
            names.withLock { $0.removeAll { $0 == body } }
            return Response(status: .noContent)
        default:
            return Response(status: .methodNotAllowed)
        }
    }

    private static func json(_ names: [String]) -> Response {
        let data = try! JSONEncoder().encode(names)
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
