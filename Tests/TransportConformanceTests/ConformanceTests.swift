import AsyncHTTPClientAdapter
import Testing
import TetherTestingTraits
import TransportConformance
import TransportKit
import URLSessionAdapter

/// Every transport Tether ships passes the same suite: the double against the in-memory host, the real ones against
/// a Hummingbird server and a misbehaving TCP peer on loopback. One test per transport (`--filter urlSession`), each
/// check a test case of its own.
@Suite("Transport conformance", .needsProcessorTime, .leakChecked)
struct ConformanceTests {
    @Test("InMemoryTransport", .timeLimit(minutes: 3), arguments: TransportConformanceSuite.lightChecks)
    func inMemory(_ check: ConformanceCheck) async throws {
        try await ConformedTransport.inMemory.run(check)
    }

    @Test("URLSessionTransport", .timeLimit(minutes: 3), arguments: TransportConformanceSuite.lightChecks)
    func urlSession(_ check: ConformanceCheck) async throws {
        try await ConformedTransport.urlSession.run(check)
    }

    @Test("AsyncHTTPClientTransport", .timeLimit(minutes: 3), arguments: TransportConformanceSuite.lightChecks)
    func asyncHTTPClient(_ check: ConformanceCheck) async throws {
        try await ConformedTransport.asyncHTTPClient.run(check)
    }
}

/// The checks that may keep a client busy for seconds, apart from the suites with deadlines (`.loadsEveryCore`):
/// the 256 MiB gzip bomb kept FoundationNetworking's one queue busy for 5 s in a full test run (0.75 s alone), and
/// every URLSession check beside it waited; in CI, two of them past their 10 s deadlines. Beside the 50 MB bodies
/// through URLSession, which need that queue too, the bomb itself timed out in CI (after 36 s): the URLSession checks
/// take the queue in turns with the other tests that hold it up (`.holdsUp`).
@Suite("Transport conformance: the heavy checks", .loadsEveryCore, .leakChecked)
struct HeavyConformanceTests {
    @Test("InMemoryTransport", .timeLimit(minutes: 3), arguments: TransportConformanceSuite.heavyChecks)
    func inMemory(_ check: ConformanceCheck) async throws {
        try await ConformedTransport.inMemory.run(check)
    }

    @Test(
        "URLSessionTransport", .timeLimit(minutes: 3), .holdsUp(.foundationNetworkingQueue),
        arguments: TransportConformanceSuite.heavyChecks)
    func urlSession(_ check: ConformanceCheck) async throws {
        try await ConformedTransport.urlSession.run(check)
    }

    @Test("AsyncHTTPClientTransport", .timeLimit(minutes: 3), arguments: TransportConformanceSuite.heavyChecks)
    func asyncHTTPClient(_ check: ConformanceCheck) async throws {
        try await ConformedTransport.asyncHTTPClient.run(check)
    }
}

/// A transport the conformance suite runs against, made the way each check asks.
enum ConformedTransport: String, Sendable, CustomStringConvertible {
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
