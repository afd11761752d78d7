import Foundation
import Testing
import TetherInspector
import TetherTesting
import TetherTestingTraits

/// Who may ask the inspector: loopback by default; anything else only with a token, which every request must carry.
@Suite("Inspector: security", .timeLimit(minutes: 1))
struct InspectorSecurityTests {
    @Test("Listening beyond loopback without a token is refused, with the address in the error; bad values too")
    func nonLoopbackNeedsToken() throws {
        for host in ["0.0.0.0", "::", "192.168.1.20"] {
            let error = #expect(throws: InspectorError.self) {
                _ = try Inspector(configuration: InspectorConfiguration(host: host))
            }
            #expect(error?.kind == .nonLoopbackWithoutToken)
            #expect(error?.description.contains(host) == true)
        }
        #expect(throws: InspectorError.self) { _ = try Inspector(configuration: .init(port: 70_000)) }
        #expect(throws: InspectorError.self) { _ = try Inspector(configuration: .init(token: "")) }
        _ = try Inspector(configuration: InspectorConfiguration(host: "0.0.0.0", token: "s3cret"))
        _ = try Inspector(configuration: InspectorConfiguration(host: "::1"))
    }

    @Test("With a token, a request without it gets 401; with it, as a bearer header or in the query, 200")
    func tokenRequired() async throws {
        let scenario = try await InspectorScenario()
        try await scenario.withInspector(InspectorConfiguration(token: "s3cret")) { _, port in
            for path in ["/", "/api/v1/inspection", "/inspector.js"] {
                #expect(try await InspectorScenario.get(port, path).status == 401, "\(path) without the token")
                let wrong = try await InspectorScenario.get(port, path, headers: ["Authorization": "Bearer guess"])
                #expect(wrong.status == 401, "\(path) with a wrong token")
            }
            let header = try await InspectorScenario.get(
                port, "/api/v1/inspection", headers: ["Authorization": "Bearer s3cret"])
            #expect(header.status == 200)
            #expect(try await InspectorScenario.get(port, "/?token=s3cret").status == 200)
        }
    }

    @Test(
        "The server is bound to loopback: the machine's other address refuses it",
        .enabled(if: LoopbackProbe.otherAddress() != nil))
    func boundToLoopback() async throws {
        let scenario = try await InspectorScenario()
        let other = try #require(LoopbackProbe.otherAddress())
        try await scenario.withInspector { _, port in
            #expect(LoopbackProbe.canConnect(to: "127.0.0.1", port: port))
            #expect(!LoopbackProbe.canConnect(to: other, port: port), "\(other):\(port) refuses")
        }
    }
}
