import TransportKit

extension TransportConformanceSuite {
    static let redirectChecks: [ConformanceCheck] = [
        ConformanceCheck("follows-redirects", "redirects are followed to the final response under the default policy") { context in
            let transport = try await context.transport()
            let response = try await send(transport, TransportRequest(url: context.host.url("/redirect/3")))
            try require(response.status == 200 && String(decoding: response.body, as: UTF8.self) == "arrived", "/redirect/3 ended with \(response.status)")
        },
        ConformanceCheck("redirect-limit", "one redirect more than the policy allows gives tooManyRedirects") { context in
            let transport = try await context.transport(ConformanceOptions(redirects: .follow(max: 2)))
            try await expectFailure(transport, TransportRequest(url: context.host.url("/redirect/5")), kinds: [.tooManyRedirects], within: .seconds(10))
            let within = try await send(transport, TransportRequest(url: context.host.url("/redirect/2")))
            try require(within.status == 200, "two redirects under a limit of two ended with \(within.status)")
        },
        ConformanceCheck("redirects-not-followed", "under .never the 3xx response comes back as it is, Location included") { context in
            let transport = try await context.transport(ConformanceOptions(redirects: .never))
            let response = try await send(transport, TransportRequest(url: context.host.url("/redirect/1")))
            try require(response.status == 302, "got \(response.status), expected the 302 itself")
            try require(response.headers["location"] == "/redirect/0", "Location came back as \(response.headers["location"] ?? "nothing")")
        },
    ]
}
