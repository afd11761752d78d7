// Transport benchmarks: 10,000 GETs against a loopback Hummingbird server, sequential and at concurrency 32,
// through Resource.load() on AsyncHTTPClientTransport beside the same requests on a bare HTTPClient — the ratio
// is Tether's overhead — and through URLSessionTransport for reference.
//   TETHER_BENCHMARKS=1 swift package --scratch-path .build-bench benchmark --target TransportBenchmarks

import AsyncHTTPClient
import AsyncHTTPClientAdapter
import Benchmark
import NIOCore
import ResourceKit
import TransportConformance
import TransportKit
import URLSessionAdapter

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

let requestCount = 10_000
let concurrency = 32
let path = "/bytes/256"

/// One iteration: `requestCount` GETs, split over `workers` tasks that each send one after another.
func run(workers: Int, _ get: @escaping @Sendable (_ worker: Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<workers {
            let share = requestCount / workers + (worker < requestCount % workers ? 1 : 0)
            group.addTask { for _ in 0..<share { try await get(worker) } }
        }
        try await group.waitForAll()
    }
}

/// Runs `body` once per scaled iteration against a fresh loopback server, measuring only the requests.
func measure(
    _ benchmark: Benchmark, workers: Int,
    through make:
        @escaping @Sendable (LoopbackHTTPServer) async throws -> (
            get: @Sendable (Int) async throws -> Void, close: @Sendable () async throws -> Void
        )
) async throws {
    try await LoopbackHTTPServer.with { server in
        let (get, close) = try await make(server)
        try await run(workers: workers, get)  // warm the connections
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { try await run(workers: workers, get) }
        benchmark.stopMeasurement()
        try await close()
    }
}

func bareClient(_ server: LoopbackHTTPServer) -> (
    get: @Sendable (Int) async throws -> Void, close: @Sendable () async throws -> Void
) {
    var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 8
    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    let url = server.url(path).absoluteString
    return (
        { _ in
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
            blackHole(try await response.body.collect(upTo: 1 << 20))
        }, { try await client.shutdown() }
    )
}

func throughResources(
    _ server: LoopbackHTTPServer, transport: any Transport, close: @escaping @Sendable () async throws -> Void
) -> (get: @Sendable (Int) async throws -> Void, close: @Sendable () async throws -> Void) {
    let service = Service(baseURL: server.baseURL, transport: transport)
    // One resource per worker: load() supersedes a load in flight on the same resource.
    let resources = (0..<concurrency).map { service.resource(path).withParam("worker", "\($0)") }
    return (
        { worker in
            let request: Request = resources[worker].load()
            blackHole(try await request.outcome.get())
        }, close
    )
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 1,
        maxDuration: .seconds(30),
        maxIterations: 5
    )

    for workers in [1, concurrency] {
        let label = workers == 1 ? "sequential" : "concurrency \(workers)"
        Benchmark("10k GETs, \(label): bare HTTPClient") { benchmark in
            try await measure(benchmark, workers: workers) { bareClient($0) }
        }
        Benchmark("10k GETs, \(label): Resource.load() on AsyncHTTPClientTransport") { benchmark in
            try await measure(benchmark, workers: workers) { server in
                let transport = AsyncHTTPClientTransport(configuration: .init(maxConnectionsPerHost: 8))
                return throughResources(server, transport: transport) { try await transport.shutdown() }
            }
        }
        Benchmark("10k GETs, \(label): Resource.load() on URLSessionTransport") { benchmark in
            try await measure(benchmark, workers: workers) { server in
                throughResources(server, transport: URLSessionTransport(configuration: .init(maxConnectionsPerHost: 8)))
                {}
            }
        }
    }
}
