import Foundation
import Testing
import TetherClock
import TetherTesting
import TransportKit

@Suite("Redirects and redaction")
struct RedirectAndRedactionTests {
    let origin = URL(string: "https://api.example.com/a")!

    @Test("303, and 301/302 after POST, become a GET without a body; 307/308 keep method and body")
    func methodRules() throws {
        let post = TransportRequest(
            method: .post, url: origin, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
        for status in [301, 302, 303] {
            let next = try #require(
                RedirectPolicy.followUp(to: post, after: TransportResponse(status: status, headers: ["Location": "/b"]))
            )
            #expect(next.method == .get && next.body == nil && next.headers["Content-Type"] == nil)
            #expect(next.url.absoluteString == "https://api.example.com/b")
        }
        for status in [307, 308] {
            let next = try #require(
                RedirectPolicy.followUp(to: post, after: TransportResponse(status: status, headers: ["Location": "b"])))
            #expect(next.method == .post && next.body == Data("{}".utf8))
        }
        #expect(RedirectPolicy.followUp(to: post, after: TransportResponse(status: 302)) == nil, "no Location")
        #expect(
            RedirectPolicy.followUp(to: post, after: TransportResponse(status: 200, headers: ["Location": "/b"])) == nil
        )
    }

    @Test("Credentials are not carried to another origin")
    func crossOrigin() throws {
        let request = TransportRequest(
            url: origin, headers: ["Authorization": "Bearer t", "Cookie": "c=1", "Accept": "text/plain"])
        let same = try #require(
            RedirectPolicy.followUp(to: request, after: TransportResponse(status: 302, headers: ["Location": "/b"])))
        #expect(same.headers["Authorization"] == "Bearer t")
        let other = try #require(
            RedirectPolicy.followUp(
                to: request, after: TransportResponse(status: 302, headers: ["Location": "https://evil.example.net/"])))
        #expect(other.headers["Authorization"] == nil && other.headers["Cookie"] == nil)
        #expect(other.headers["Accept"] == "text/plain")
    }

    @Test(
        "API keys and the request's own sensitive fields stay with their origin too; an https → http hop drops them, a default port does not"
    )
    func sensitiveFields() throws {
        var request = TransportRequest(
            url: origin, headers: ["X-Api-Key": "k", "x-goog-api-key": "g", "X-Tenant-Secret": "s", "Accept": "*/*"])
        request.sensitiveHeaders.insert("X-Tenant-Secret")
        #expect(request.sensitiveHeaders.contains("x-tenant-secret"), "names are kept lower-cased")
        func hop(to location: String) throws -> TransportRequest {
            try #require(
                RedirectPolicy.followUp(
                    to: request, after: TransportResponse(status: 307, headers: ["Location": location])))
        }
        for location in ["https://api.example.com:443/b", "HTTPS://API.example.com/b", "/b"] {
            let same = try hop(to: location)
            #expect(
                same.headers["X-Api-Key"] == "k" && same.headers["X-Tenant-Secret"] == "s",
                "\(location) is the same origin")
        }
        for location in ["http://api.example.com/b", "https://api.example.com:8443/b", "https://other.example.com/b"] {
            let other = try hop(to: location)
            #expect(other.headers.fields.map(\.name) == ["Accept"], "\(location) is another origin")
        }
        let logged =
            TransportLog.metadata(for: request, includeHeaders: true)["http.request.headers"].map {
                String(describing: $0)
            } ?? ""
        #expect(
            !logged.contains("k,") && logged.contains("X-Tenant-Secret: <redacted>")
                && logged.contains("X-Api-Key: <redacted>"))
    }

    @Test("Content codings: identity unless the request asks; a coding the request did not accept is named")
    func contentCodings() {
        #expect(ContentCoding.identityUnlessAsked([:])["Accept-Encoding"] == "identity")
        #expect(ContentCoding.identityUnlessAsked(["accept-encoding": "br"]).values(for: "Accept-Encoding") == ["br"])
        let cases: [(response: String?, asked: String?, refused: String?)] = [
            (nil, nil, nil), ("identity", nil, nil), ("gzip", nil, "gzip"), ("GZIP", "gzip", nil),
            ("gzip", "gzip;q=0, br", "gzip"), ("gzip, br", "gzip", "br"), ("zstd", "*", nil),
            ("gzip", "identity", "gzip"),
            ("deflate", "gzip ; q=0.5 , deflate;q=1", nil),
        ]
        for (response, asked, refused) in cases {
            let responseHeaders: HTTPHeaders = response.map { ["Content-Encoding": $0] } ?? [:]
            let requestHeaders: HTTPHeaders = asked.map { ["Accept-Encoding": $0] } ?? [:]
            #expect(
                ContentCoding.unaccepted(response: responseHeaders, request: requestHeaders) == refused,
                "Content-Encoding \(response ?? "none") for Accept-Encoding \(asked ?? "none")")
        }
    }

    @Test("A redirect loop ends with tooManyRedirects naming the first request")
    func loop() async throws {
        let transport = InMemoryTransport(redirects: .follow(max: 3))
        transport.route("https://api.example.com/a", reply: .status(302, headers: ["Location": "/b"]))
        transport.route("https://api.example.com/b", reply: .status(302, headers: ["Location": "/a"]))
        await #expect { try await transport.send(TransportRequest(url: origin)) } throws: { error in
            guard let error = error as? TransportError else { return false }
            return error.kind == .tooManyRedirects && error.url == origin
        }
        #expect(transport.requests.count == 4)
    }

    @Test("Redaction hides credential values in any case, keeps names, order and other values")
    func redaction() {
        var headers: HTTPHeaders = ["authorization": "Bearer t", "Accept": "text/plain", "SET-COOKIE": "a=1"]
        headers.add(name: "Cookie", value: "b=2")
        headers.add(name: "X-Api-Key", value: "k")
        let redacted = headers.redacted(alsoRedacting: ["x-api-key"])
        #expect(redacted.fields.map(\.name) == ["authorization", "Accept", "SET-COOKIE", "Cookie", "X-Api-Key"])
        #expect(redacted.fields.map(\.value) == ["<redacted>", "text/plain", "<redacted>", "<redacted>", "<redacted>"])
        #expect(
            URL(string: "https://me:pw@api.example.com/x?q=1")!.redactedForLogging
                == "https://me:<redacted>@api.example.com/x?q=1")
        #expect(URL(string: "https://api.example.com/x")!.redactedForLogging == "https://api.example.com/x")
    }

    @Test("The in-memory transport times out on its clock when a reply is later than the request's timeout")
    func inMemoryTimeout() async throws {
        let clock = ManualTimeSource()
        let transport = InMemoryTransport(timeSource: clock)
        transport.route(origin.absoluteString, reply: .never)
        let task = Task { try await transport.send(TransportRequest(url: origin, timeout: .seconds(5))) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        await #expect { try await task.value } throws: { ($0 as? TransportError)?.kind == .timedOut }
    }
}
