import Foundation
import TransportKit

extension TransportConformanceSuite {
    /// Quick, exact waits, so that the checks count attempts rather than time.
    static let quickRetries = RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(10), jitter: 0)

    static let retryChecks: [ConformanceCheck] = [
        ConformanceCheck(
            "retries-transient-status",
            "behind RetryingTransport, a 503 is retried exactly up to the configured attempts, counted by the server"
        ) { context in
            let transport = try await context.transport().retrying(quickRetries)
            let recovered = try await send(transport, TransportRequest(url: context.host.url("/flaky/recovers/2/503")))
            try require(
                recovered.status == 200 && String(decoding: recovered.body, as: UTF8.self) == "attempt 3",
                "two 503s then success: got \(recovered.status) \(String(decoding: recovered.body, as: UTF8.self))")
            try require(
                context.host.recorder.attempts(for: "recovers") == 3,
                "the server counted \(context.host.recorder.attempts(for: "recovers")) attempts, expected 3")
            let exhausted = try await send(transport, TransportRequest(url: context.host.url("/flaky/exhausted/9/503")))
            try require(exhausted.status == 503, "the last attempt's 503 should come back, got \(exhausted.status)")
            try require(
                context.host.recorder.attempts(for: "exhausted") == 3,
                "the server counted \(context.host.recorder.attempts(for: "exhausted")) attempts, expected 3")
            let notTransient = try await send(transport, TransportRequest(url: context.host.url("/flaky/final/9/500")))
            try require(
                notTransient.status == 500 && context.host.recorder.attempts(for: "final") == 1,
                "a 500 was retried: \(context.host.recorder.attempts(for: "final")) attempts")
        },
        ConformanceCheck("no-retry-for-post", "POST is never retried unless the policy names it") { context in
            let base = try await context.transport()
            let request = TransportRequest(
                method: .post, url: context.host.url("/flaky/post/9/503"), body: Data("order".utf8))
            let response = try await send(base.retrying(quickRetries), request)
            try require(
                response.status == 503 && context.host.recorder.attempts(for: "post") == 1,
                "POST was retried: \(context.host.recorder.attempts(for: "post")) attempts")
            var withPost = quickRetries
            withPost.methods.insert(.post)
            let allowed = TransportRequest(
                method: .post, url: context.host.url("/flaky/post-allowed/9/503"), body: Data("order".utf8))
            _ = try await send(base.retrying(withPost), allowed)
            try require(
                context.host.recorder.attempts(for: "post-allowed") == 3,
                "POST named in the policy: \(context.host.recorder.attempts(for: "post-allowed")) attempts, expected 3")
        },
        ConformanceCheck(
            "honours-retry-after",
            "a 429 with Retry-After waits that long; one longer than the policy allows is returned at once"
        ) { context in
            let base = try await context.transport()
            let clock = ContinuousClock()
            let start = clock.now
            let response = try await send(
                base.retrying(quickRetries), TransportRequest(url: context.host.url("/flaky/polite/1/429?retryAfter=1"))
            )
            let elapsed = clock.now - start
            try require(
                response.status == 200 && context.host.recorder.attempts(for: "polite") == 2,
                "429 then success: got \(response.status) after \(context.host.recorder.attempts(for: "polite")) attempts"
            )
            try require(elapsed >= .milliseconds(950), "Retry-After: 1 was not honoured: retried after \(elapsed)")
            var impatient = quickRetries
            impatient.maxRetryAfter = .milliseconds(500)
            let refused = try await send(
                base.retrying(impatient), TransportRequest(url: context.host.url("/flaky/rude/1/429?retryAfter=120")))
            try require(
                refused.status == 429 && context.host.recorder.attempts(for: "rude") == 1,
                "Retry-After: 120 above the policy's limit was waited for")
        },
        ConformanceCheck(
            "retries-connection-failures",
            "a refused connection is retried up to the limit and the error counts the attempts; malformed responses are not retried"
        ) { context in
            let base = try await context.transport()
            let refused = try await expectFailure(
                base.retrying(quickRetries), TransportRequest(url: context.host.refusedURL, timeout: .seconds(10)),
                kinds: [.connectionRefused], within: .seconds(10))
            try require(refused.attempts == 3, "the error says \(refused.attempts) attempts, expected 3")
            let garbage = try await expectFailure(
                base.retrying(quickRetries), TransportRequest(url: context.host.url(.garbage), timeout: .seconds(10)),
                kinds: [.malformedResponse], within: .seconds(10))
            try require(garbage.attempts == 1, "a malformed response was retried: \(garbage.attempts) attempts")
            if context.host.observesConnections {
                try require(
                    context.host.recorder.connectionsOpened == 1,
                    "the peer saw \(context.host.recorder.connectionsOpened) connections for one unretried request")
            }
        },
    ]
}
