import Foundation
import Testing
import TetherInspector

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Who may ask the inspector: loopback by default; anything else only with a token, which every request must carry.
@Suite("Inspector: security", .timeLimit(.minutes(1)))
struct InspectorSecurityTests {
    @Test("Listening beyond loopback without a token is refused, with the address in the error; bad values too")
    func nonLoopbackNeedsToken() throws {
        for host in ["0.0.0.0", "::", "192.168.1.20"] {
            let error = #expect(throws: InspectorError.self) {
                _ = try Inspector(configuration: InspectorConfiguration(host: host))
            }
            #expect(error?.kind == .nonLoopbackWithoutToken)
            #expect(error?.description.contains(host) == true)
        }
        #expect(throws: InspectorError.self) { _ = try Inspector(configuration: .init(port: 70_000)) }
        #expect(throws: InspectorError.self) { _ = try Inspector(configuration: .init(token: "")) }
        _ = try Inspector(configuration: InspectorConfiguration(host: "0.0.0.0", token: "s3cret"))
        _ = try Inspector(configuration: InspectorConfiguration(host: "::1"))
    }

    @Test("With a token, a request without it gets 401; with it, as a bearer header or in the query, 200")
    func tokenRequired() async throws {
        let scenario = try await InspectorScenario()
        try await scenario.withInspector(InspectorConfiguration(token: "s3cret")) { _, port in
            for path in ["/", "/api/v1/inspection", "/inspector.js"] {
                #expect(try await InspectorScenario.get(port, path).status == 401, "\(path) without the token")
                let wrong = try await InspectorScenario.get(port, path, headers: ["Authorization": "Bearer guess"])
                #expect(wrong.status == 401, "\(path) with a wrong token")
            }
            let header = try await InspectorScenario.get(
                port, "/api/v1/inspection", headers: ["Authorization": "Bearer s3cret"])
            #expect(header.status == 200)
            #expect(try await InspectorScenario.get(port, "/?token=s3cret").status == 200)
        }
    }

    @Test("The server is bound to loopback: it does not answer on the machine's other addresses")
    func boundToLoopback() async throws {
        let scenario = try await InspectorScenario()
        let other = Self.nonLoopbackAddress()
        try await scenario.withInspector { _, port in
            guard let other else {
                // A machine with no other interface: nothing else could connect anyway.
                return
            }
            var request = URLRequest(url: URL(string: "http://\(other):\(port)/api/v1/inspection")!)
            request.timeoutInterval = 5
            await #expect(throws: (any Error).self, "\(other) must not reach the inspector") {
                _ = try await URLSession.shared.data(for: request)
            }
        }
    }

    /// An IPv4 address of this machine other than loopback, if it has one.
    static func nonLoopbackAddress() -> String? {
        var addresses: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&addresses) == 0, let first = addresses else { return nil }
        defer { freeifaddrs(addresses) }
        for pointer in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let address = pointer.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else {
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
}
