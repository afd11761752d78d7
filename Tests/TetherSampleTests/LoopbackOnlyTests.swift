import Foundation
import Testing
import TetherTestingTraits

/// Security: the embedded demo API listens on the loopback interface only.
@Suite("The demo server is reachable on loopback only", .needsProcessorTime)
struct LoopbackOnlyTests {
    @Test(
        "Connections to the machine's other addresses are refused; loopback connects",
        .enabled(if: Self.otherAddress() != nil))
    func loopbackOnly() async throws {
        try await SampleProcess.withDirectory { directory in
            let long = SampleRunTests.shortConfiguration.replacingOccurrences(
                of: "arrivals: 60", with: "arrivals: 10000000")
            try long.write(to: directory.appendingPathComponent("long.yaml"), atomically: true, encoding: .utf8)
            let other = try #require(Self.otherAddress())
            var probes: (loopback: Bool, other: Bool, port: Int)?
            let result = try await SampleProcess.run(["--config", "long.yaml"], in: directory) { output in
                guard
                    let range = output.range(
                        of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                    let port = Int(output[range].split(separator: ":").last ?? "")
                else { return false }
                probes = (Self.canConnect(to: "127.0.0.1", port: port), Self.canConnect(to: other, port: port), port)
                return true
            }
            let seen = try #require(probes, "the server's address was printed")
            #expect(seen.loopback, "127.0.0.1:\(seen.port) accepts")
            #expect(!seen.other, "\(other):\(seen.port) refuses: the server is bound to loopback only")
            #expect(result.status == 130, "\(result.output)\n\(result.errors)")
        }
    }

    /// The machine's first IPv4 address that is not loopback, if it has one.
    static func otherAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else {
                continue
            }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard
                getnameinfo(
                    address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0,
                    NI_NUMERICHOST) == 0
            else { continue }
            let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !text.hasPrefix("127.") { return text }
        }
        return nil
    }

    /// Whether a TCP connection to `host:port` is accepted.
    static func canConnect(to host: String, port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return false }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
