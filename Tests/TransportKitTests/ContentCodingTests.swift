import Foundation
import Testing
import TransportKit

/// A body in a coding the request asked for is handed over decoded, whichever of the formats HTTP's `gzip` and
/// `deflate` name it arrives in; anything else is a typed error. Through the in-memory transport, which decodes as
/// the others do (the conformance suite's `asked-coding` checks all three against a real server).
@Suite("Content codings")
struct ContentCodingTests {
    let url = URL(string: "https://api.example.com/coded")!
    let text = String(repeating: "Tether decodes what it asked for. ", count: 3)

    /// Sends a request that accepts `accepted`, answered with `body` coded as `coding`.
    func exchange(_ body: Data, coding: String, accepted: String = "gzip, deflate") async throws -> TransportResponse {
        let transport = InMemoryTransport()
        transport.route(url.absoluteString, reply: .init(headers: ["Content-Encoding": coding], body: body))
        return try await transport.send(TransportRequest(url: url, headers: ["Accept-Encoding": accepted]))
    }

    @Test(
        "gzip, several gzip members, zlib-wrapped and raw deflate all decode; the headers stay the server's",
        arguments: [
            ("gzip", "H4sIAAAAAAACAwtJLclILVJISU3OT0ktVijPSCxRyCxRSCzOTk1RSMsv0lMIoYIKANxs/ttmAAAA", nil),
            ("x-gzip", "H4sIAAAAAAACAwtJLclILVJISU3OT0ktVijPSCxRyCxRSCzOTk1RSMsv0lMIoYIKANxs/ttmAAAA", nil),
            ("gzip", "H4sIAAAAAAACA8vPS1UAAElhrCMEAAAAH4sIAAAAAAACAyspzwcAZorKEQMAAAA=", "one two"),
            ("deflate", "eJwLSS3JSC1SSElNzk9JLVYoz0gsUcgsUUgszk5NUUjLL9JTCKGCCgBh7iQ0", nil),
            ("deflate", "C0ktyUgtUkhJTc5PSS1WKM9ILFHILFFILM5OTVFIyy/SUwihggoA", nil),
        ] as [(String, String, String?)])
    func decodes(coding: String, base64: String, expected: String?) async throws {
        let response = try await exchange(
            Data(base64Encoded: base64)!, coding: coding, accepted: "gzip, x-gzip, deflate")
        #expect(String(decoding: response.body, as: UTF8.self) == expected ?? text)
        #expect(response.headers["Content-Encoding"] == coding)
    }

    @Test("Two codings are undone last first; identity is no coding; an empty body stays empty")
    func layered() async throws {
        let gzip = Data(base64Encoded: "H4sIAAAAAAACAwtJLclILVJISU3OT0ktVijPSCxRyCxRSCzOTk1RSMsv0lMIoYIKANxs/ttmAAAA")!
        let plain = try await exchange(gzip, coding: "identity, gzip")
        #expect(String(decoding: plain.body, as: UTF8.self) == text)
        let empty = try await exchange(Data(), coding: "gzip")
        #expect(empty.body.isEmpty)
    }

    @Test("A damaged or cut-short body, or a coding no transport here decodes, is malformedResponse naming it")
    func refused() async throws {
        let gzip = Data(base64Encoded: "H4sIAAAAAAACAwtJLclILVJISU3OT0ktVijPSCxRyCxRSCzOTk1RSMsv0lMIoYIKANxs/ttmAAAA")!
        for (body, coding, accepted, named) in [
            (gzip.prefix(gzip.count - 5), "gzip", "gzip", "'gzip'"),
            (Data("not compressed".utf8), "deflate", "deflate", "'deflate'"),
            (gzip + Data("trailing".utf8), "gzip", "gzip", "'gzip'"),
            (Data([1, 2, 3]), "br", "br", "'br'"),
        ] as [(Data, String, String, String)] {
            let error = await #expect(throws: TransportError.self) {
                try await exchange(body, coding: coding, accepted: accepted)
            }
            #expect(
                error?.kind == .malformedResponse && error?.message.contains(named) == true,
                "\(coding): \(String(describing: error))")
        }
    }

    @Test(
        "A body that decodes to more than the limit is responseTooLarge; one that decodes to exactly the limit is not")
    func limit() throws {
        let gzip = Data(base64Encoded: "H4sIAAAAAAACAwtJLclILVJISU3OT0ktVijPSCxRyCxRSCzOTk1RSMsv0lMIoYIKANxs/ttmAAAA")!
        let request = TransportRequest(url: url, headers: ["Accept-Encoding": "gzip"])
        let response = TransportResponse(status: 200, headers: ["Content-Encoding": "gzip"], body: gzip)
        let size = text.utf8.count
        #expect(try ContentCoding.decoded(response, for: request, limit: size).body.count == size)
        let error = #expect(throws: TransportError.self) {
            try ContentCoding.decoded(response, for: request, limit: size - 1)
        }
        #expect(error?.kind == .responseTooLarge && error?.message.contains("\(size - 1)") == true)
    }
}
