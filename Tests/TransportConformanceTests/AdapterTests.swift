import Foundation
import InMemoryLogging
import Logging
import Testing
import TetherTestingTraits
import TransportConformance
import TransportKit

/// What each real adapter promises beyond the conformance suite: a size limit, redacted logs (large bodies: in
/// ``LargeBodyTests``).
// Three minutes, here and in the other .needsProcessorTime suites: a limit catches a hang; it does not measure speed.
// (Until 2026-11-29 a time limit also counted the wait for a turn while the suites that load every core ran — 50–55 s
// of the former one-minute limit in every full run; the turn is now taken outside it, see ProcessorShareTrait.)
@Suite("Real transports", .needsProcessorTime, .timeLimit(minutes: 3), .leakChecked)
struct AdapterTests {
    @Test("A body above the configured limit fails with responseTooLarge", arguments: RealTransport.allCases)
    func sizeLimit(_ kind: RealTransport) async throws {
        try await LoopbackHTTPServer.with { server in
            try await kind.with(maxResponseSize: 1 << 20) { transport in
                let within = try await transport.send(TransportRequest(url: server.url("/bytes/\(1 << 20)")))
                #expect(within.body.count == 1 << 20)
                for path in ["/bytes/\(2 << 20)", "/chunked/64/65536"] {
                    await #expect { try await transport.send(TransportRequest(url: server.url(path))) } throws: {
                        ($0 as? TransportError)?.kind == .responseTooLarge
                    }
                }
            }
        }
    }

    @Test("Credentials never reach a log line, at any level", arguments: RealTransport.allCases)
    func redaction(_ kind: RealTransport) async throws {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "redaction", factory: { _ in handler })
        logger.logLevel = .trace
        try await LoopbackHTTPServer.with { server in
            try await kind.with(logger: logger) { transport in
                var url = server.url("/echo?setCookie")
                url = URL(string: url.absoluteString.replacing("http://", with: "http://user:s3cret-password@"))!
                let request = TransportRequest(
                    url: url,
                    headers: [
                        "Authorization": "Bearer s3cret-token", "Cookie": "id=s3cret-cookie",
                        "Proxy-Authorization": "Basic s3cret-proxy", "X-Probe-Visible": "plain",
                    ])
                _ = try? await transport.send(request)
                _ = try? await transport.send(
                    TransportRequest(
                        url: server.url("/misbehave/garbage"), headers: ["Authorization": "Bearer s3cret-token"]))
            }
        }
        let lines = handler.entries.map { "\($0.message) \($0.metadata)" }
        #expect(lines.count >= 3, "the requests were logged")
        #expect(
            lines.allSatisfy { !$0.contains("s3cret") },
            "a credential leaked: \(lines.filter { $0.contains("s3cret") })")
        #expect(lines.contains { $0.contains("Authorization: <redacted>") })
        #expect(lines.contains { $0.contains("Set-Cookie: <redacted>") })
        #expect(lines.contains { $0.contains("X-Probe-Visible: plain") }, "other headers stay readable")
    }

    @Test(
        "A URL that is not http or https fails with invalidURL before anything is sent",
        arguments: RealTransport.allCases)
    func invalidScheme(_ kind: RealTransport) async throws {
        try await kind.with { transport in
            for text in ["ftp://127.0.0.1/file", "file:///etc/passwd", "http:///no-host"] {
                let request = TransportRequest(url: URL(string: text)!)
                await #expect { try await transport.send(request) } throws: {
                    ($0 as? TransportError)?.kind == .invalidURL
                }
            }
        }
    }
}
