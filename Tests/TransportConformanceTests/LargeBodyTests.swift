import Foundation
import Testing
import TetherTestingTraits
import TransportConformance
import TransportKit

/// Bodies far larger than the conformance suite's, through each real adapter. Apart from the suites with deadlines
/// (`.loadsEveryCore`): a debug build copies 50 MB several times over on every core. Through URLSession, the body
/// goes through FoundationNetworking's one queue: never beside the gzip bomb on that queue (`.holdsUp`).
@Suite("Real transports: large bodies", .loadsEveryCore, .timeLimit(minutes: 3), .leakChecked)
struct LargeBodyTests {
    @Test(
        "A 50 MB body goes up and comes down whole", .holdsUp(.foundationNetworkingQueue),
        arguments: RealTransport.allCases)
    func fiftyMegabytes(_ kind: RealTransport) async throws {
        try await LoopbackHTTPServer.with { server in
            try await kind.with { transport in
                let size = 50 << 20
                let down = try await transport.send(TransportRequest(url: server.url("/bytes/\(size)")))
                #expect(down.body.count == size)
                #expect(ConformanceEndpoints.isPattern(down.body))
                let body = ConformanceEndpoints.pattern(count: size)
                let up = try await transport.send(TransportRequest(method: .put, url: server.url("/echo"), body: body))
                let report = try JSONDecoder().decode(EchoReport.self, from: up.body)
                #expect(report.bodyLength == size)
                #expect(report.bodyChecksum == EchoReport.checksum(body))
            }
        }
    }
}
