import AsyncHTTPClientAdapter
import Foundation
import Logging
import ResourceKit
import ServiceLifecycle
import Testing
// The examples of Docs/Transports.md and Docs/TransportKit.md, compiled (see OwnershipKitSnippets.swift).
import TetherClock
import TetherTesting
import TransportConformance
import TransportKit
import URLSessionAdapter
import UnixSignals

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum TransportSnippets {
    static func make(logger: Logger) async throws {
        // snippet: Transports.make
        let transport = AsyncHTTPClientTransport(configuration: .init(connectTimeout: .seconds(3)))
        // end snippet
        // snippet: Transports.retrying
        let retrying = transport.retrying(.default)  // GET, HEAD, PUT, DELETE, OPTIONS: up to 3 attempts in 30 s
        // end snippet
        // snippet: Transports.service
        let service = ResourceKit.Service(baseURL: "https://api.example.com/v1", transport: retrying)
        // end snippet
        _ = service
        // snippet: Transports.shutdown
        let group = ServiceGroup(services: [transport], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()  // or: try await transport.shutdown()
        // end snippet
    }

    static func urlSession() -> URLSessionTransport {
        // snippet: Transports.session-configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpAdditionalHeaders = ["User-Agent": "Shelf/2.1"]
        let transport = URLSessionTransport(sessionConfiguration: sessionConfiguration)
        // end snippet
        return transport
    }

    static func inMemory(url: URL) async throws -> TransportResponse {
        // snippet: TransportKit.in-memory
        let clock = ManualTimeSource()  // t = 1000 s until advanced
        let transport = InMemoryTransport(timeSource: clock)
        transport.route(.get, "https://api.example.com/v1/items", reply: .json(#"[1, 2]"#, headers: ["ETag": "\"v1\""]))
        transport.enqueue(.get, "https://api.example.com/v1/items", .status(304))  // the next request only
        // end snippet
        // snippet: TransportKit.send
        let response = try await transport.send(TransportRequest(url: url, headers: ["Accept": "application/json"]))
        // end snippet
        return response
    }
}

/// Your own transport, as the conformance example makes it (here: URLSession-free, over AsyncHTTPClient).
final class MyTransport: Transport {
    let base: AsyncHTTPClientTransport

    init(redirects: RedirectPolicy, connectTimeout: Duration) {
        base = AsyncHTTPClientTransport(configuration: .init(connectTimeout: connectTimeout, redirects: redirects))
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse { try await base.send(request) }
    func close() async { try? await base.shutdown() }
}

/// Compiled, not run: MyTransport wraps AsyncHTTPClientTransport, whose conformance TransportConformanceTests runs.
@Suite(.disabled("the docs' example; AsyncHTTPClientTransport's own run is in TransportConformanceTests"))
struct TransportConformanceExample {
    // snippet: Transports.conformance
    @Test(arguments: TransportConformanceSuite.checks)
    func conforms(_ check: ConformanceCheck) async throws {
        try await TransportConformanceSuite.run(check) { options in
            MyTransport(redirects: options.redirects, connectTimeout: options.connectTimeout)
        } release: { transport in
            await (transport as? MyTransport)?.close()
        }
    }
    // end snippet
}
