import AsyncHTTPClientAdapter
import Testing
import TetherTestingTraits
import TransportConformance
import TransportKit
import URLSessionAdapter

/// Every transport Tether ships passes the same suite: the double against the in-memory host, the real ones against
/// a Hummingbird server and a misbehaving TCP peer on loopback.
@Suite("Transport conformance", .needsProcessorTime, .leakChecked)
struct ConformanceTests {
    @Test("InMemoryTransport", .timeLimit(.minutes(3)), arguments: TransportConformanceSuite.checks)
    func inMemory(_ check: ConformanceCheck) async throws {
        try await TransportConformanceSuite.runInMemory(check)
    }

    @Test("URLSessionTransport", .timeLimit(.minutes(3)), arguments: TransportConformanceSuite.checks)
    func urlSession(_ check: ConformanceCheck) async throws {
        try await TransportConformanceSuite.run(check) { options in
            URLSessionTransport(
                configuration: .init(connectTimeout: options.connectTimeout, redirects: options.redirects))
        }
    }

    @Test("AsyncHTTPClientTransport", .timeLimit(.minutes(3)), arguments: TransportConformanceSuite.checks)
    func asyncHTTPClient(_ check: ConformanceCheck) async throws {
        try await TransportConformanceSuite.run(check) { options in
            AsyncHTTPClientTransport(
                configuration: .init(connectTimeout: options.connectTimeout, redirects: options.redirects))
        } release: { transport in
            try? await (transport as? AsyncHTTPClientTransport)?.shutdown()
        }
    }
}
