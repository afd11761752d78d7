import Testing
import TetherTestingTraits
import TransportConformance
import TransportKit
import URLSessionAdapter

@Suite("URLSessionTransport", .needsProcessorTime, .timeLimit(.minutes(1)))
struct URLSessionTransportTests {
    final class Weak: @unchecked Sendable {
        weak var transport: URLSessionTransport?
    }

    @Test("A transport dropped after use is deinitialized: its session is invalidated, nothing keeps it alive")
    func released() async throws {
        let box = Weak()
        try await LoopbackHTTPServer.with { server in
            do {
                let transport = URLSessionTransport()
                box.transport = transport
                let response = try await transport.send(TransportRequest(url: server.url("/echo")))
                #expect(response.status == 200)
            }
            #expect(box.transport == nil)
        }
    }

    @Test("A sub-second request timeout is kept exactly, though FoundationNetworking counts whole seconds")
    func subSecondTimeout() async throws {
        try await LoopbackHTTPServer.with { server in
            let transport = URLSessionTransport()
            // Warm up first: libcurl's first exchange in a process can take most of a second on a loaded CI machine.
            _ = try await transport.send(TransportRequest(url: server.url("/echo")))
            // FoundationNetworking would truncate 0.9 s to 0; the transport's own timer lets the exchange finish.
            let fast = try await transport.send(TransportRequest(url: server.url("/echo"), timeout: .milliseconds(900)))
            #expect(fast.status == 200)
            // The server answers after 3 s: timedOut proves the 300 ms timeout ended the exchange first.
            await #expect {
                try await transport.send(TransportRequest(url: server.url("/slow/3000"), timeout: .milliseconds(300)))
            } throws: { ($0 as? TransportError)?.kind == .timedOut }
        }
    }
}
