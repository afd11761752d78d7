import Foundation
import TransportKit

extension TransportConformanceSuite {
    static let failureChecks: [ConformanceCheck] = [
        ConformanceCheck(
            "identity-asked",
            "a request that names no Accept-Encoding is sent with Accept-Encoding: identity; one that names its own keeps it"
        ) { context in
            let transport = try await context.transport()
            for (asked, expected) in [(nil, "identity"), ("gzip", "gzip")] as [(String?, String)] {
                let headers: HTTPHeaders = asked.map { ["Accept-Encoding": $0] } ?? [:]
                let response = try await send(
                    transport, TransportRequest(url: context.host.url("/echo"), headers: headers))
                let report = try JSONDecoder().decode(EchoReport.self, from: response.body)
                try require(
                    report.values(for: "Accept-Encoding") == [expected],
                    "asked \(asked ?? "nothing"): the server received Accept-Encoding \(report.values(for: "Accept-Encoding")), expected [\(expected)]"
                )
            }
        },
        ConformanceCheck(
            "asked-coding",
            "a body coded gzip as the request asked (Accept-Encoding: gzip) is handed over decoded, as URLSession does"
        ) { context in
            let transport = try await context.transport()
            let request = TransportRequest(url: context.host.url("/gzip/100000"), headers: ["Accept-Encoding": "gzip"])
            let response = try await send(transport, request)
            try require(response.status == 200, "\(request): status \(response.status), expected 200")
            try require(
                response.body == Data(count: 100_000),
                "\(request): the body is \(response.body.count) bytes, expected 100000 decoded zeros")
        },
        ConformanceCheck(
            "unasked-coding",
            "a body compressed though the request accepted only identity (a 256 MiB gzip bomb) gives malformedResponse at its head, nothing decompressed",
            heavy: true
        ) { context in
            let transport = try await context.transport()
            let request = TransportRequest(url: context.host.url("/gzip/\(256 << 20)"), timeout: .seconds(60))
            let error = try await expectFailure(transport, request, kinds: [.malformedResponse], within: .seconds(30))
            try require("\(error)".contains("gzip"), "the error names the coding: \(error)")
        },
        ConformanceCheck(
            "close-mid-body",
            "a server that closes the connection in the middle of a body gives connectionFailed, not a truncated success"
        ) { context in
            let transport = try await context.transport()
            try await expectFailure(
                transport, TransportRequest(url: context.host.url(.closeMidBody), timeout: .seconds(10)),
                kinds: [.connectionFailed], within: .seconds(10))
        },
        ConformanceCheck(
            "close-mid-chunk",
            "a server that closes the connection in the middle of a chunked body gives connectionFailed"
        ) { context in
            let transport = try await context.transport()
            try await expectFailure(
                transport, TransportRequest(url: context.host.url(.closeMidChunk), timeout: .seconds(10)),
                kinds: [.connectionFailed], within: .seconds(10))
        },
        ConformanceCheck("garbage", "bytes that are not HTTP give malformedResponse") { context in
            let transport = try await context.transport()
            try await expectFailure(
                transport, TransportRequest(url: context.host.url(.garbage), timeout: .seconds(10)),
                kinds: [.malformedResponse], within: .seconds(10))
        },
        ConformanceCheck(
            "no-answer-times-out",
            "a server that accepts and never answers gives timedOut when the request's timeout elapses"
        ) { context in
            let transport = try await context.transport()
            try await expectTimeout(transport, context.host.url(.noAnswer))
        },
        ConformanceCheck(
            "silent-body-times-out",
            "a server that sends the head and then nothing gives timedOut when the request's timeout elapses"
        ) { context in
            let transport = try await context.transport()
            try await expectTimeout(transport, context.host.url(.headThenSilence))
        },
        ConformanceCheck("refused-port", "a port nothing listens on gives connectionRefused at once") { context in
            let transport = try await context.transport()
            try await expectFailure(
                transport, TransportRequest(url: context.host.refusedURL, timeout: .seconds(60)),
                kinds: [.connectionRefused], within: .seconds(15))
        },
        ConformanceCheck("tls-failure", "an https request to a server that does not speak TLS fails with tlsFailure") {
            context in
            let transport = try await context.transport()
            var components = URLComponents(url: context.host.url("/echo"), resolvingAgainstBaseURL: false)!
            components.scheme = "https"
            let url = components.url!
            try await expectFailure(
                transport, TransportRequest(url: url, timeout: .seconds(10)), kinds: [.tlsFailure], within: .seconds(10)
            )
        },
        ConformanceCheck(
            "connect-timeout",
            "a connection that is never accepted fails with timedOut after the connect timeout, well before the request's"
        ) { context in
            let transport = try await context.transport(ConformanceOptions(connectTimeout: .seconds(1)))
            try await expectFailure(
                transport, TransportRequest(url: context.host.unacceptingURL, timeout: .seconds(60)),
                kinds: [.timedOut], within: .seconds(20))
        },
        ConformanceCheck("unresolvable-host", "a host name that does not resolve gives hostNotFound, promptly") {
            context in
            let transport = try await context.transport()
            try await expectFailure(
                transport, TransportRequest(url: context.host.unresolvableURL, timeout: .seconds(60)),
                kinds: [.hostNotFound], within: .seconds(25))
        },
        ConformanceCheck(
            "cancellation",
            "cancelling the calling task ends the exchange at once with cancelled, and the server sees the connection close"
        ) { context in
            let transport = try await context.transport()
            let host = context.host
            let request = TransportRequest(url: host.url(.noAnswer), timeout: .seconds(60))
            let task = Task { try await transport.send(request) }
            if host.observesConnections {
                // The request itself, not only its connection: a client may keep a connection whose request it
                // never sent (AsyncHTTPClient pools it, idle), and only one carrying a request must be abandoned.
                let path = request.url.path
                try await waitUntil("the server never received the request") { host.recorder.requests(to: path) >= 1 }
            } else {
                try await Task.sleep(for: .milliseconds(50))
            }
            let clock = ContinuousClock()
            let start = clock.now
            task.cancel()
            let outcome = await task.result
            let elapsed = clock.now - start
            switch outcome {
            case .success(let response):
                throw ConformanceFailure(message: "\(request): cancelled, yet returned status \(response.status)")
            case .failure(let error as TransportError):
                try require(
                    error.kind == .cancelled, "\(request): cancelled, yet failed with \(error.kind): \(error.message)")
            case .failure(is CancellationError):
                break
            case .failure(let error):
                throw ConformanceFailure(message: "\(request): cancelled, yet threw \(type(of: error)): \(error)")
            }
            try require(elapsed < .seconds(15), "\(request): took \(elapsed) to end after cancellation")
            if host.observesConnections {
                try await waitUntil("the connection stayed open after cancellation: the transport did not abandon it") {
                    host.recorder.connectionsClosed >= 1
                }
            }
        },
    ]

    /// The bounds in these checks are generous (seconds, where the mechanism takes milliseconds): each need only be
    /// well below the request's own timeout (60 s) to prove the mechanism, and must hold on a loaded machine under
    /// ThreadSanitizer, which slows everything about five times.
    static func expectTimeout(_ transport: any Transport, _ url: URL) async throws {
        let timeout = Duration.milliseconds(500)
        let clock = ContinuousClock()
        let start = clock.now
        try await expectFailure(
            transport, TransportRequest(url: url, timeout: timeout), kinds: [.timedOut], within: timeout + .seconds(15))
        let elapsed = clock.now - start
        try require(
            elapsed >= timeout - .milliseconds(50), "\(url): timed out after \(elapsed), before the \(timeout) timeout")
    }

    /// Waits for something the server observes (a connection opening or closing). 30 s is a deadline for
    /// correctness, not a timing bound: under ThreadSanitizer beside other work, 5 s once was not enough.
    static func waitUntil(_ failure: String, within bound: Duration = .seconds(30), _ condition: () -> Bool)
        async throws
    {
        let clock = ContinuousClock()
        let deadline = clock.now + bound
        while !condition() {
            try require(clock.now < deadline, failure + " (waited \(bound))")
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
