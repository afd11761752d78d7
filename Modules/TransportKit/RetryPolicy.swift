import TetherClock

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// When and how often a ``RetryingTransport`` tries a request again: exponential backoff with jitter, for idempotent
/// methods and requests with an idempotency key only unless told otherwise, on transient connection failures and on 429, 502, 503 and 504 — honouring
/// `Retry-After` — within a cap on attempts and on total time.
///
/// ```swift
/// let transport = URLSessionTransport().retrying(.default)                 // GET, HEAD, PUT… up to 3 attempts
/// let patient = URLSessionTransport().retrying(RetryPolicy(maxAttempts: 5, maxTotalTime: .seconds(60)))
/// var posts = RetryPolicy.default
/// posts.methods.insert(.post)                                             // only if your POSTs are idempotent
/// ```
///
/// Values out of range are clamped rather than trusted: fewer than one attempt means one, a negative duration
/// means zero, a jitter outside 0…1 is pinned to the nearer end.
public struct RetryPolicy: Sendable, Hashable {
    /// The methods that are idempotent by definition (RFC 9110 §9.2.2): `GET`, `HEAD`, `OPTIONS`, `PUT`, `DELETE`
    /// and `TRACE`. `POST` and `PATCH` are not.
    public static let idempotentMethods: Set<HTTPMethod> = [.get, .head, .options, .put, .delete, "TRACE"]

    /// The statuses worth another attempt: 429 Too Many Requests, 502 Bad Gateway, 503 Service Unavailable and
    /// 504 Gateway Timeout.
    public static let transientStatuses: Set<Int> = [429, 502, 503, 504]

    /// The failures worth another attempt: the kinds whose ``TransportError/Kind-swift.struct/isTransient`` is true
    /// (refused, broken, timed out). DNS failures, TLS failures and malformed responses are not retried.
    public static let transientErrors: Set<TransportError.Kind> = Set(
        TransportError.Kind.allCases.filter(\.isTransient))

    /// How many attempts in all, the first included (at least 1).
    public var maxAttempts: Int
    /// The most time the attempts and the waits between them may take together, measured from the first attempt.
    /// A retry whose wait would end after it is not made, and each attempt's timeout is cut to what is left.
    public var maxTotalTime: Duration
    /// The wait before the second attempt.
    public var initialBackoff: Duration
    /// How much longer each further wait is than the one before.
    public var backoffMultiplier: Double
    /// The longest wait between attempts, before jitter.
    public var maxBackoff: Duration
    /// How much of each wait is random, 0…1: a wait is `backoff × (1 − jitter × r)` with `r` uniform in 0..<1.
    /// 0 waits exactly the backoff; 1 is "full jitter".
    public var jitter: Double
    /// The methods that are retried (by default ``idempotentMethods``).
    public var methods: Set<HTTPMethod>
    /// A request carrying this header field is retried whatever its method: its key lets the server answer a
    /// repeat without applying it twice (the IETF draft's `Idempotency-Key`, the default, which ResourceKit's
    /// mutations send). Nil retries by method alone.
    public var idempotencyKeyHeader: String?
    /// The statuses that are retried (by default ``transientStatuses``).
    public var statuses: Set<Int>
    /// The failures that are retried (by default ``transientErrors``).
    public var errors: Set<TransportError.Kind>
    /// Whether a `Retry-After` header (seconds or an HTTP date) sets the wait, in place of the backoff.
    public var honorsRetryAfter: Bool
    /// The longest `Retry-After` that is waited for; a longer one ends the retries and returns the response.
    public var maxRetryAfter: Duration

    /// Makes a policy; every parameter has a default.
    public init(
        maxAttempts: Int = 3, maxTotalTime: Duration = .seconds(30), initialBackoff: Duration = .milliseconds(200),
        backoffMultiplier: Double = 2, maxBackoff: Duration = .seconds(10), jitter: Double = 0.5,
        methods: Set<HTTPMethod> = RetryPolicy.idempotentMethods, statuses: Set<Int> = RetryPolicy.transientStatuses,
        errors: Set<TransportError.Kind> = RetryPolicy.transientErrors, honorsRetryAfter: Bool = true,
        maxRetryAfter: Duration = .seconds(60), idempotencyKeyHeader: String? = "Idempotency-Key"
    ) {
        self.maxAttempts = maxAttempts
        self.maxTotalTime = maxTotalTime
        self.initialBackoff = initialBackoff
        self.backoffMultiplier = backoffMultiplier
        self.maxBackoff = maxBackoff
        self.jitter = jitter
        self.methods = methods
        self.statuses = statuses
        self.errors = errors
        self.honorsRetryAfter = honorsRetryAfter
        self.maxRetryAfter = maxRetryAfter
        self.idempotencyKeyHeader = idempotencyKeyHeader
    }

    /// Whether `request` may be tried again: its method is one of ``methods``, or it carries an idempotency key.
    func retries(_ request: TransportRequest) -> Bool {
        methods.contains(request.method) || idempotencyKeyHeader.map { request.headers[$0] != nil } == true
    }

    /// Three attempts within 30 seconds, 200 ms doubling to at most 10 s, half of each wait random.
    public static let `default` = RetryPolicy()

    /// One attempt: never retry.
    public static let never = RetryPolicy(maxAttempts: 1)

    /// The wait after the `attempt`-th attempt failed (1 for the first), for a random draw `random` in 0..<1.
    public func backoff(afterAttempt attempt: Int, random: Double) -> Duration {
        let cap = max(maxBackoff, .zero).timeInterval
        var capped = min(max(initialBackoff, .zero).timeInterval, cap)
        for _ in 1..<max(attempt, 1) where capped < cap {
            capped = min(capped * max(backoffMultiplier, 1), cap)
        }
        let spread = min(max(jitter, 0), 1) * min(max(random, 0), 1)
        return .seconds(capped * (1 - spread))
    }

    /// The wait a `Retry-After` header asks for — delta-seconds or an HTTP date, read against `now` — or nil when
    /// the header is missing, unreadable or not honoured.
    public func retryAfter(in headers: HTTPHeaders, now: Date) -> Duration? {
        guard honorsRetryAfter, let value = headers["Retry-After"]?.trimmingSpaces, !value.isEmpty else { return nil }
        if let seconds = Int(value) { return .seconds(max(seconds, 0)) }
        guard let date = HTTPDate.parse(value) else { return nil }
        return .seconds(max(date.timeIntervalSince(now), 0))
    }

    var attemptLimit: Int { max(maxAttempts, 1) }
    var timeLimit: Duration { max(maxTotalTime, .zero) }
}

extension String {
    var trimmingSpaces: Substring {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice.removeFirst() }
        while slice.last?.isWhitespace == true { slice.removeLast() }
        return slice
    }
}
