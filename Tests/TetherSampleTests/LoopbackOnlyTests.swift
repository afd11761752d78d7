import Foundation
import Testing
import TetherTesting
import TetherTestingTraits

/// Security: the embedded demo API listens on the loopback interface only.
@Suite("The demo server is reachable on loopback only", .needsProcessorTime)
struct LoopbackOnlyTests {
    @Test(
        "Connections to the machine's other addresses are refused; loopback connects",
        .enabled(if: LoopbackProbe.otherAddress() != nil))
    func loopbackOnly() async throws {
        try await SampleProcess.withDirectory { directory in
            let long = SampleRunTests.shortConfiguration.replacingOccurrences(
                of: "arrivals: 60", with: "arrivals: 10000000")
            try long.write(to: directory.appendingPathComponent("long.yaml"), atomically: true, encoding: .utf8)
            let other = try #require(LoopbackProbe.otherAddress())
            var probes: (loopback: Bool, other: Bool, port: Int)?
            let result = try await SampleProcess.run(["--config", "long.yaml"], in: directory) { output in
                guard
                    let range = output.range(
                        of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                    let port = Int(output[range].split(separator: ":").last ?? "")
                else { return false }
                probes = (
                    LoopbackProbe.canConnect(to: "127.0.0.1", port: port),
                    LoopbackProbe.canConnect(to: other, port: port), port
                )
                return true
            }
            let seen = try #require(probes, "the server's address was printed")
            #expect(seen.loopback, "127.0.0.1:\(seen.port) accepts")
            #expect(!seen.other, "\(other):\(seen.port) refuses: the server is bound to loopback only")
            #expect(result.status == 130, "\(result.output)\n\(result.errors)")
        }
    }
}
