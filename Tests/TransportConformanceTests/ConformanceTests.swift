import AsyncHTTPClientAdapter
import Testing
import TetherTestingTraits
import TransportConformance
import TransportKit
import URLSessionAdapter

/// Every transport Tether ships passes the same suite: the double against the in-memory host, the real ones against
/// a Hummingbird server and a misbehaving TCP peer on loopback. Each check on each transport is a test case of its
/// own (`--filter` by the transport's name, the check's name in the case's arguments).
@Suite("Transport conformance", .needsProcessorTime, .leakChecked)
struct ConformanceTests {
    @Test(
        "Every transport, every check with deadlines", .timeLimit(.minutes(3)),
        arguments: ConformedTransport.allCases, TransportConformanceSuite.lightChecks)
    func light(_ transport: ConformedTransport, _ check: ConformanceCheck) async throws {
        try await transport.run(check)
    }
}

/// The checks that may keep a client busy for seconds, apart from the suites with deadlines (`.loadsEveryCore`):
/// the 256 MiB gzip bomb kept FoundationNetworking's one queue busy for 5 s in a full test run (0.75 s alone), and
/// every URLSession check beside it waited; in CI, two of them past their 10 s deadlines.
@Suite("Transport conformance: the heavy checks", .loadsEveryCore, .leakChecked)
struct HeavyConformanceTests {
    @Test(
        "Every transport, the checks that keep a client busy", .timeLimit(.minutes(3)),
        arguments: ConformedTransport.allCases, TransportConformanceSuite.heavyChecks)
    func heavy(_ transport: ConformedTransport, _ check: ConformanceCheck) async throws {
        try await transport.run(check)
    }
}

/// A transport the conformance suite runs against, made the way each check asks.
enum ConformedTransport: String, CaseIterable, Sendable, CustomStringConvertible {
    case inMemory = "InMemoryTransport"
    case urlSession = "URLSessionTransport"
    case asyncHTTPClient = "AsyncHTTPClientTransport"

    var description: String { rawValue }

    func run(_ check: ConformanceCheck) async throws {
        switch self {
        case .inMemory:
            try await TransportConformanceSuite.runInMemory(check)
        case .urlSession:
            try await TransportConformanceSuite.run(check) { options in
                URLSessionTransport(
                    configuration: .init(connectTimeout: options.connectTimeout, redirects: options.redirects))
            }
        case .asyncHTTPClient:
            try await TransportConformanceSuite.run(check) { options in
                AsyncHTTPClientTransport(
                    configuration: .init(connectTimeout: options.connectTimeout, redirects: options.redirects))
            } release: { transport in
                try? await (transport as? AsyncHTTPClientTransport)?.shutdown()
            }
        }
    }
}
