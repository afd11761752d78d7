import Foundation
import TransportKit

extension TransportConformanceSuite {
    static let redirectChecks: [ConformanceCheck] = [
        ConformanceCheck("follows-redirects", "redirects are followed to the final response under the default policy") {
            context in
            let transport = try await context.transport()
            let response = try await send(transport, TransportRequest(url: context.host.url("/redirect/3")))
            try require(
                response.status == 200 && String(decoding: response.body, as: UTF8.self) == "arrived",
                "/redirect/3 ended with \(response.status)")
        },
        ConformanceCheck("redirect-limit", "one redirect more than the policy allows gives tooManyRedirects") {
            context in
            let transport = try await context.transport(ConformanceOptions(redirects: .follow(max: 2)))
            // A correctness deadline, not a speed target: FoundationNetworking serves every session in a process on
            // one queue, and three hops took 10 s beside the suite's 10 MB bodies on a loaded two-core machine.
            try await expectFailure(
                transport, TransportRequest(url: context.host.url("/redirect/5")), kinds: [.tooManyRedirects],
                within: .seconds(30))
            let within = try await send(transport, TransportRequest(url: context.host.url("/redirect/2")))
            try require(within.status == 200, "two redirects under a limit of two ended with \(within.status)")
        },
        ConformanceCheck(
            "redirect-loop", "a URL that redirects to itself gives tooManyRedirects under the default policy"
        ) {
            context in
            let transport = try await context.transport()
            // The request's timeout bounds a transport that would follow the loop for ever; it is a hang bound, not
            // a speed target, so it is as long as the redirect limit's: every hop of the default policy's chain is a
            // round trip that a loaded two-core machine can delay by seconds.
            try await expectFailure(
                transport, TransportRequest(url: context.host.url("/loop"), timeout: .seconds(30)),
                kinds: [.tooManyRedirects], within: .seconds(30))
        },
        ConformanceCheck(
            "redirects-not-followed", "under .never the 3xx response comes back as it is, Location included"
        ) { context in
            let transport = try await context.transport(ConformanceOptions(redirects: .never))
            let response = try await send(transport, TransportRequest(url: context.host.url("/redirect/1")))
            try require(response.status == 302, "got \(response.status), expected the 302 itself")
            try require(
                response.headers["location"] == "/redirect/0",
                "Location came back as \(response.headers["location"] ?? "nothing")")
        },
        ConformanceCheck(
            "credentials-stay-with-origin",
            "a redirect to another origin drops every sensitive header (Authorization, Cookie, X-Api-Key and those the request adds); one within the origin keeps them"
        ) { context in
            let transport = try await context.transport()
            let elsewhere = context.host.otherOriginURL("/echo").absoluteString
            let secrets = [
                "Authorization": "Bearer s3cret", "Cookie": "id=s3cret", "X-Api-Key": "s3cret",
                "X-Tenant-Secret": "s3cret",
            ]
            for (target, crossesOrigin) in [(elsewhere, true), ("/echo", false)] {
                let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
                var request = TransportRequest(
                    url: context.host.url("/redirect-to?url=\(encoded)"),
                    headers: HTTPHeaders(
                        secrets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + [("X-Probe-Visible", "plain")]))
                request.sensitiveHeaders.insert("x-tenant-secret")
                let response = try await send(transport, request)
                try require(response.status == 200, "the redirect to \(target) ended with \(response.status)")
                let report = try JSONDecoder().decode(EchoReport.self, from: response.body)
                try require(
                    report.values(for: "X-Probe-Visible") == ["plain"],
                    "an ordinary header was lost on the way to \(target)")
                for name in secrets.keys {
                    let arrived = !report.values(for: name).isEmpty
                    try require(
                        arrived != crossesOrigin,
                        "\(name) \(arrived ? "reached" : "did not reach") \(target) after a redirect \(crossesOrigin ? "to another origin" : "within the origin")"
                    )
                }
            }
        },
    ]
}
