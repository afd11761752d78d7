import Testing
import TetherTestingTraits
import TransportConformance
import TransportKit
import URLSessionAdapter

// Three minutes, as the other .needsProcessorTime suites: a limit catches a hang; it does not measure speed.
@Suite("URLSessionTransport", .needsProcessorTime, .timeLimit(minutes: 3))
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
            // FoundationNetworking would truncate 0.9 s to 0, and every attempt would fail at once; the transport's own
            // timer lets the exchange finish. The timer counts from the call, and FoundationNetworking serves every
            // session in the process on one queue, which the conformance suite beside this one can keep busy for
            // seconds: an attempt may time out then, but never early, and one of them finishes.
            let clock = ContinuousClock()
            var fast: TransportResponse?
            for _ in 0..<30 where fast == nil {
                let start = clock.now
                do {
                    fast = try await transport.send(
                        TransportRequest(url: server.url("/echo"), timeout: .milliseconds(900)))
                } catch let error as TransportError where error.kind == .timedOut {
                    #expect(clock.now - start >= .milliseconds(900), "timed out early: \(error)")
                }
            }
            #expect(fast?.status == 200)
            // The server answers after 3 s: timedOut proves the 300 ms timeout ended the exchange first.
            await #expect {
                try await transport.send(TransportRequest(url: server.url("/slow/3000"), timeout: .milliseconds(300)))
            } throws: { ($0 as? TransportError)?.kind == .timedOut }
        }
    }
}
