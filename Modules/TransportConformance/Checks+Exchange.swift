import Foundation
import TransportKit

extension TransportConformanceSuite {
    static let exchangeChecks: [ConformanceCheck] = [
        ConformanceCheck(
            "methods",
            "GET, POST, PUT, PATCH, DELETE and OPTIONS reach the server with their bodies; HEAD gets headers and no body"
        ) { context in
            let transport = try await context.transport()
            for method: HTTPMethod in [.get, .post, .put, .patch, .delete, .options] {
                let body = [.post, .put, .patch].contains(method) ? Data("payload for \(method)".utf8) : nil
                let request = TransportRequest(method: method, url: context.host.url("/echo"), body: body)
                let response = try await send(transport, request)
                try require(response.status == 200, "\(request): status \(response.status), expected 200")
                try require(
                    response.headers["X-Echo-Method"] == method.rawValue,
                    "\(request): the server saw \(response.headers["X-Echo-Method"] ?? "nothing")")
                let report = try JSONDecoder().decode(EchoReport.self, from: response.body)
                try require(
                    report.bodyLength == (body?.count ?? 0),
                    "\(request): the server got \(report.bodyLength) body bytes, expected \(body?.count ?? 0)")
            }
            let head = TransportRequest(method: .head, url: context.host.url("/echo"))
            let response = try await send(transport, head)
            try require(
                response.status == 200 && response.headers["X-Echo-Method"] == "HEAD",
                "\(head): status \(response.status), method seen \(response.headers["X-Echo-Method"] ?? "none")")
            try require(response.body.isEmpty, "\(head): a HEAD response came with \(response.body.count) body bytes")
        },
        ConformanceCheck(
            "status-families", "every status family comes back as a response, never as an error, with its body"
        ) { context in
            let transport = try await context.transport()
            for status in [200, 201, 202, 204, 300, 304, 400, 401, 403, 404, 409, 418, 429, 500, 501, 502, 503, 504] {
                let request = TransportRequest(url: context.host.url("/status/\(status)"))
                let response = try await send(transport, request)
                try require(response.status == status, "\(request): status \(response.status), expected \(status)")
                let expected = status == 204 || status == 304 ? "" : "status \(status)"
                try require(
                    String(decoding: response.body, as: UTF8.self) == expected,
                    "\(request): body \(response.body.count) bytes, expected \"\(expected)\"")
                try require(
                    response.isSuccess == (200..<300).contains(status), "\(request): isSuccess is \(response.isSuccess)"
                )
            }
        },
        ConformanceCheck(
            "header-round-trip",
            "request headers reach the server as sent; response headers come back, looked up in any case, repeated fields kept"
        ) { context in
            let transport = try await context.transport()
            var headers: HTTPHeaders = ["X-Probe-Token": "abc 123", "Accept": "application/json"]
            headers.add(name: "X-Probe-Multi", value: "one")
            headers.add(name: "X-Probe-Multi", value: "two")
            let request = TransportRequest(url: context.host.url("/echo"), headers: headers)
            let response = try await send(transport, request)
            let report = try JSONDecoder().decode(EchoReport.self, from: response.body)
            try require(
                report.values(for: "x-probe-token") == ["abc 123"],
                "the server saw X-Probe-Token \(report.values(for: "x-probe-token"))")
            let multi = report.values(for: "x-probe-multi").flatMap { $0.split(separator: ",") }.map {
                String($0.filter { $0 != " " })
            }
            try require(multi == ["one", "two"], "the server saw X-Probe-Multi \(multi), expected [one, two]")
            try require(
                response.headers["x-reply-token"] == "abc 123",
                "X-Reply-Token came back as \(response.headers["x-reply-token"] ?? "nothing")")
            try require(response.headers["X-REPLY-TOKEN"] == "abc 123", "header lookup is case-sensitive")
            try require(
                splitValues(response.headers, "x-many") == ["a", "b"],
                "X-Many came back as \(response.headers.values(for: "x-many")), expected a and b")
            try require(
                response.headers["content-type"] == "application/json",
                "Content-Type came back as \(response.headers["content-type"] ?? "nothing")")
        },
        ConformanceCheck(
            "conditional-get", "If-None-Match with the current ETag gives 304 and no body; with an old one, 200"
        ) { context in
            let transport = try await context.transport()
            let url = context.host.url("/etag/v7")
            let first = try await send(transport, TransportRequest(url: url))
            try require(
                first.status == 200 && first.headers["etag"] == "\"v7\"",
                "GET \(url): status \(first.status), ETag \(first.headers["etag"] ?? "none")")
            let matching = try await send(transport, TransportRequest(url: url, headers: ["If-None-Match": "\"v7\""]))
            try require(
                matching.status == 304,
                "If-None-Match \"v7\": status \(matching.status), expected 304 (is a cache in the way?)")
            try require(matching.body.isEmpty, "a 304 came with \(matching.body.count) body bytes")
            let stale = try await send(transport, TransportRequest(url: url, headers: ["If-None-Match": "\"v6\""]))
            try require(
                stale.status == 200 && String(decoding: stale.body, as: UTF8.self) == "version v7",
                "If-None-Match \"v6\": status \(stale.status)")
        },
        ConformanceCheck("large-download", "a 10 MB body arrives whole, every byte right") { context in
            let transport = try await context.transport()
            let size = 10 << 20
            let response = try await send(transport, TransportRequest(url: context.host.url("/bytes/\(size)")))
            try require(response.body.count == size, "got \(response.body.count) bytes, expected \(size)")
            try require(ConformanceEndpoints.isPattern(response.body), "the 10 MB body arrived with wrong bytes")
        },
        ConformanceCheck("large-upload", "a 10 MB request body reaches the server whole") { context in
            let transport = try await context.transport()
            let body = ConformanceEndpoints.pattern(count: 10 << 20)
            let request = TransportRequest(
                method: .post, url: context.host.url("/echo"), headers: ["Content-Type": "application/octet-stream"],
                body: body)
            let response = try await send(transport, request)
            let report = try JSONDecoder().decode(EchoReport.self, from: response.body)
            try require(
                report.bodyLength == body.count, "the server got \(report.bodyLength) bytes, expected \(body.count)")
            try require(report.bodyChecksum == EchoReport.checksum(body), "the server got different bytes")
        },
        ConformanceCheck("chunked-response", "a body sent with chunked transfer encoding arrives whole") { context in
            let transport = try await context.transport()
            let response = try await send(transport, TransportRequest(url: context.host.url("/chunked/64/4096")))
            try require(response.body.count == 64 * 4096, "got \(response.body.count) bytes, expected \(64 * 4096)")
            try require(ConformanceEndpoints.isPattern(response.body), "the chunked body arrived with wrong bytes")
        },
        ConformanceCheck("concurrent-requests", "32 requests sent at once from many tasks each get their own response")
        { context in
            let transport = try await context.transport()
            let host = context.host
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<32 {
                    group.addTask {
                        let size = 1000 + index
                        let response = try await send(transport, TransportRequest(url: host.url("/bytes/\(size)")))
                        try require(
                            response.body.count == size && ConformanceEndpoints.isPattern(response.body),
                            "request \(index) got \(response.body.count) bytes, expected \(size)")
                    }
                }
                try await group.waitForAll()
            }
        },
    ]
}
