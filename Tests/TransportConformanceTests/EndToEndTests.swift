import Foundation
import ResourceKit
import Testing
import TetherConcurrency
import TetherTestingTraits
import TransportConformance
import TransportKit

/// ResourceKit over each real transport and the loopback server: what Siesta's users rely on, on real sockets.
@Suite("ResourceKit end to end", .needsProcessorTime, .timeLimit(minutes: 3), .leakChecked)
struct EndToEndTests {
    @Test(
        "100 concurrent loadIfNeeded() calls on one resource make exactly one request",
        arguments: RealTransport.allCases)
    func deduplication(_ kind: RealTransport) async throws {
        try await LoopbackHTTPServer.with { server in
            try await kind.with { transport in
                let service = Service(baseURL: server.baseURL, transport: transport)
                let resource = service.resource("/slow/200")
                let requests = await withTaskGroup(of: Request?.self, returning: [Request].self) { group in
                    for _ in 0..<100 { group.addTask { resource.loadIfNeeded() } }
                    var requests: [Request] = []
                    for await request in group { if let request { requests.append(request) } }
                    return requests
                }
                #expect(Set(requests).count == 1, "every caller shares one request")
                for request in requests { _ = try await request.outcome.get() }
                #expect(server.endpoints.recorder.requests(to: "/slow/200") == 1)
                #expect(resource.text == "slow")
                #expect(resource.loadIfNeeded() == nil, "fresh data: no request")
                #expect(server.endpoints.recorder.requests(to: "/slow/200") == 1)
            }
        }
    }

    @Test(
        "Progress of an upload and of a 4 MB download: growing from the transport's byte counts, last exactly 1",
        arguments: RealTransport.allCases)
    func progress(_ kind: RealTransport) async throws {
        try await LoopbackHTTPServer.with { server in
            try await kind.with { transport in
                let service = Service(baseURL: server.baseURL, transport: transport)
                service.configure { $0.progressReportingInterval = .zero }
                let makers: [@Sendable () -> Request] = [
                    { service.resource("/bytes/\(4 << 20)").load() },
                    { service.resource("/echo").request(.post, body: Data(count: 4 << 20)) },
                ]
                for make in makers {
                    let request = make()
                    let seen = LockedValue<[Double]>([])
                    let completedAfter = LockedValue<Int?>(nil)
                    request
                        .onProgress { value in seen.withLock { $0.append(value) } }
                        .onCompletion { _ in completedAfter.withLock { $0 = seen.withLock { $0.count } } }
                    _ = try await request.outcome.get()
                    let values = seen.withLock { $0 }
                    #expect(values.last == 1, "\(request): \(values)")
                    #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "\(request): \(values)")
                    #expect(values.contains { $0 > 0 && $0 < 1 }, "\(request): reports before the end")
                    #expect(completedAfter.withLock { $0 } == values.count, "1 came before completion")
                }
            }
        }
    }

    @Test("An ETag round trip gives notModified and keeps the data", arguments: RealTransport.allCases)
    func etagRoundTrip(_ kind: RealTransport) async throws {
        try await LoopbackHTTPServer.with { server in
            try await kind.with { transport in
                let service = Service(baseURL: server.baseURL, transport: transport)
                let resource = service.resource("/etag/v1")
                let events = LockedValue<[ResourceEvent]>([])
                let owner = Owner()
                resource.addObserver(owner: owner) { _, event in events.withLock { $0.append(event) } }
                _ = try await resource.load().outcome.get()
                let first = try #require(resource.latestData)
                #expect(first.etag == "\"v1\"")
                let outcome = await resource.load().outcome
                guard case .notModified = outcome else {
                    Issue.record("expected notModified, got \(outcome)")
                    return
                }
                #expect(resource.text == "version v1")
                #expect(events.withLock { $0 }.contains(.notModified))
                #expect(server.endpoints.recorder.requests(to: "/etag/v1") == 2)
                withExtendedLifetime(owner) {}
            }
        }
    }

    @Test("A 500 gives an error event with the status and keeps the last valid data", arguments: RealTransport.allCases)
    func serverError(_ kind: RealTransport) async throws {
        try await LoopbackHTTPServer.with { server in
            try await kind.with { transport in
                let service = Service(baseURL: server.baseURL, transport: transport)
                let resource = service.resource("/sequence/e2e/200,500")
                let events = LockedValue<[ResourceEvent]>([])
                let owner = Owner()
                resource.addObserver(owner: owner) { _, event in events.withLock { $0.append(event) } }
                _ = try await resource.load().outcome.get()
                let valid = try #require(resource.json)
                let failed = await resource.load().outcome
                #expect(failed.error?.kind == .httpStatus(500))
                #expect(resource.latestError?.kind == .httpStatus(500))
                #expect(resource.latestError?.entity != nil, "the server's error body is kept")
                #expect(resource.json == valid, "the last valid data stays")
                #expect(events.withLock { $0 }.last == .error)
                withExtendedLifetime(owner) {}
            }
        }
    }
}

final class Owner: Sendable {}
