import Foundation
import Testing
import TetherClock
import TetherTesting
import TransportKit

/// RetryingTransport on a manual clock: which requests are retried, how long each wait is, and what comes back.
@Suite("Retries")
struct RetryTests {
    let url = URL(string: "https://api.example.com/items")!

    func retrying(_ transport: InMemoryTransport, _ policy: RetryPolicy, clock: ManualTimeSource) -> RetryingTransport {
        RetryingTransport(transport, policy: policy, timeSource: clock, random: { 0.5 })
    }

    @Test("Waits grow exponentially, are capped, and jitter takes away at most its share")
    func backoff() {
        let policy = RetryPolicy(
            initialBackoff: .milliseconds(100), backoffMultiplier: 2, maxBackoff: .milliseconds(500), jitter: 0.5)
        #expect(policy.backoff(afterAttempt: 1, random: 0) == .milliseconds(100))
        #expect(policy.backoff(afterAttempt: 2, random: 0) == .milliseconds(200))
        #expect(policy.backoff(afterAttempt: 3, random: 0) == .milliseconds(400))
        #expect(policy.backoff(afterAttempt: 4, random: 0) == .milliseconds(500), "capped")
        #expect(policy.backoff(afterAttempt: 60, random: 0) == .milliseconds(500), "no overflow")
        #expect(policy.backoff(afterAttempt: 2, random: 0.999_999) > .milliseconds(100))
        #expect(policy.backoff(afterAttempt: 2, random: 1) == .milliseconds(100), "half of it random at most")
        var wild = policy
        wild.jitter = 7
        wild.initialBackoff = .seconds(-3)
        #expect(wild.backoff(afterAttempt: 1, random: 0.5) == .zero, "out-of-range values are clamped, not trusted")
    }

    @Test("Retry-After is read as seconds or as an HTTP date; anything else is ignored")
    func retryAfter() {
        let policy = RetryPolicy.default
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(policy.retryAfter(in: ["Retry-After": "120"], now: now) == .seconds(120))
        #expect(policy.retryAfter(in: ["Retry-After": " 3 "], now: now) == .seconds(3))
        #expect(policy.retryAfter(in: ["Retry-After": "Sun, 06 Nov 1994 08:50:07 GMT"], now: now) == .seconds(30))
        #expect(
            policy.retryAfter(in: ["Retry-After": "Sun, 06 Nov 1994 08:00:00 GMT"], now: now) == .zero,
            "a past date means now")
        #expect(
            policy.retryAfter(in: ["Retry-After": "Sunday, 06-Nov-94 08:49:37 GMT"], now: now) == nil, "obsolete format"
        )
        #expect(policy.retryAfter(in: ["Retry-After": "soon"], now: now) == nil)
        #expect(policy.retryAfter(in: ["Retry-After": "Sun, 32 Nov 1994 08:49:37 GMT"], now: now) == nil)
        #expect(policy.retryAfter(in: [:], now: now) == nil)
        var ignoring = policy
        ignoring.honorsRetryAfter = false
        #expect(ignoring.retryAfter(in: ["Retry-After": "120"], now: now) == nil)
    }

    @Test("A transient status is retried after the backoff, on the clock, up to the attempt limit")
    func transientStatus() async throws {
        let clock = ManualTimeSource()
        let transport = InMemoryTransport(timeSource: clock)
        transport.enqueue(.get, url.absoluteString, .status(503), .status(502))
        transport.route(url.absoluteString, reply: .text("ok"))
        let retrying = retrying(
            transport, RetryPolicy(maxAttempts: 3, initialBackoff: .seconds(1), jitter: 0.5), clock: clock)
        let task = Task { try await retrying.send(TransportRequest(url: url)) }
        await clock.waitForSleepers(1)
        #expect(transport.requestCount(to: url.absoluteString) == 1)
        clock.advance(by: .milliseconds(749))
        #expect(transport.requestCount(to: url.absoluteString) == 1, "the first wait is 1 s × (1 − 0.5 × 0.5) = 750 ms")
        clock.advance(by: .milliseconds(1))
        await clock.waitForSleepers(1)
        #expect(transport.requestCount(to: url.absoluteString) == 2)
        clock.advance(by: .milliseconds(1500))
        let response = try await task.value
        #expect(response.status == 200)
        #expect(transport.requestCount(to: url.absoluteString) == 3)
    }

    @Test("After the last attempt the last response comes back; a failure carries the attempt count")
    func exhausted() async throws {
        let transport = InMemoryTransport()
        transport.route(url.absoluteString, reply: .status(503))
        let fast = RetryPolicy(maxAttempts: 4, initialBackoff: .zero)
        let response = try await RetryingTransport(transport, policy: fast).send(TransportRequest(url: url))
        #expect(response.status == 503)
        #expect(transport.requestCount(to: url.absoluteString) == 4)

        let refused = URL(string: "https://api.example.com/down")!
        transport.route(refused.absoluteString, reply: .failure(.connectionRefused))
        await #expect {
            try await RetryingTransport(transport, policy: fast).send(TransportRequest(url: refused))
        } throws: { error in
            guard let error = error as? TransportError else { return false }
            return error.kind == .connectionRefused && error.attempts == 4
                && error.description.contains("after 4 attempts")
        }
    }

    @Test("Not retried: POST and PATCH by default, non-transient statuses and failures")
    func notRetried() async throws {
        let transport = InMemoryTransport()
        transport.route(url.absoluteString, reply: .status(503))
        let fast = RetryPolicy(maxAttempts: 3, initialBackoff: .zero)
        for method: HTTPMethod in [.post, .patch] {
            _ = try await RetryingTransport(transport, policy: fast).send(TransportRequest(method: method, url: url))
            #expect(transport.requestCount(to: url.absoluteString, method: method) == 1)
        }
        let broken = URL(string: "https://api.example.com/broken")!
        for kind: TransportError.Kind in [.malformedResponse, .hostNotFound, .tlsFailure, .invalidURL] {
            transport.clearLog()
            transport.route(broken.absoluteString, reply: .failure(kind))
            await #expect {
                try await RetryingTransport(transport, policy: fast).send(TransportRequest(url: broken))
            } throws: {
                ($0 as? TransportError)?.attempts == 1
            }
            #expect(transport.requestCount(to: broken.absoluteString) == 1, "\(kind) is not retried")
        }
        transport.route(url.absoluteString, reply: .status(500))
        transport.clearLog()
        _ = try await RetryingTransport(transport, policy: fast).send(TransportRequest(url: url))
        #expect(transport.requestCount(to: url.absoluteString) == 1, "500 is not transient")
    }

    @Test("A POST or PATCH with an idempotency key is retried, with the same key; without the policy's header, not")
    func idempotencyKey() async throws {
        let transport = InMemoryTransport()
        transport.route(url.absoluteString, reply: .status(503))
        let fast = RetryPolicy(maxAttempts: 3, initialBackoff: .zero)
        for method: HTTPMethod in [.post, .patch] {
            transport.clearLog()
            let request = TransportRequest(method: method, url: url, headers: ["Idempotency-Key": "k-\(method)"])
            _ = try await RetryingTransport(transport, policy: fast).send(request)
            #expect(
                transport.requests.map { $0.headers["Idempotency-Key"] } == Array(repeating: "k-\(method)", count: 3))
        }
        var byMethodOnly = fast
        byMethodOnly.idempotencyKeyHeader = nil
        transport.clearLog()
        _ = try await RetryingTransport(transport, policy: byMethodOnly).send(
            TransportRequest(method: .post, url: url, headers: ["Idempotency-Key": "k"]))
        #expect(transport.requestCount(to: url.absoluteString) == 1)
    }

    @Test("The total-time cap stops retries whose wait would overrun it, and cuts each attempt's timeout")
    func totalTime() async throws {
        let clock = ManualTimeSource()
        let transport = InMemoryTransport(timeSource: clock)
        transport.route(url.absoluteString, reply: .status(503, delay: .seconds(4)))
        let policy = RetryPolicy(
            maxAttempts: 10, maxTotalTime: .seconds(10), initialBackoff: .seconds(2), backoffMultiplier: 1, jitter: 0)
        let task = Task {
            try await retrying(transport, policy, clock: clock).send(TransportRequest(url: url, timeout: .seconds(60)))
        }
        // attempt 1: 0–4 s, wait 2 s, attempt 2: 6–10 s (its timeout cut to the 4 s left), then no time for another.
        for _ in 0..<3 {
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(2))
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(2))
        }
        let outcome = await task.result
        #expect(transport.requestCount(to: url.absoluteString) == 2)
        #expect(transport.requests.last?.timeout == .seconds(4))
        switch outcome {
        case .success(let response): #expect(response.status == 503)
        case .failure(let error): #expect((error as? TransportError)?.kind == .timedOut)
        }
    }

    @Test("A Retry-After above the policy's limit returns the response at once; within it, it sets the wait")
    func retryAfterLimit() async throws {
        let clock = ManualTimeSource()
        let transport = InMemoryTransport(timeSource: clock)
        transport.enqueue(.get, url.absoluteString, .status(429, headers: ["Retry-After": "5"]))
        transport.route(url.absoluteString, reply: .text("ok"))
        let task = Task { try await retrying(transport, .default, clock: clock).send(TransportRequest(url: url)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(4999))
        #expect(transport.requestCount(to: url.absoluteString) == 1)
        clock.advance(by: .milliseconds(1))
        #expect(try await task.value.status == 200)

        transport.enqueue(.get, url.absoluteString, .status(429, headers: ["Retry-After": "3600"]))
        let response = try await retrying(transport, .default, clock: clock).send(TransportRequest(url: url))
        #expect(response.status == 429)
    }

    @Test("Cancelling during a wait ends at once with cancelled, counting the attempts made")
    func cancelDuringWait() async throws {
        let clock = ManualTimeSource()
        let transport = InMemoryTransport(timeSource: clock)
        transport.route(url.absoluteString, reply: .status(503))
        let task = Task { try await retrying(transport, .default, clock: clock).send(TransportRequest(url: url)) }
        await clock.waitForSleepers(1)
        task.cancel()
        await #expect { try await task.value } throws: { error in
            guard let error = error as? TransportError else { return false }
            return error.kind == .cancelled && error.attempts == 1
        }
        #expect(transport.requestCount(to: url.absoluteString) == 1)
    }
}
