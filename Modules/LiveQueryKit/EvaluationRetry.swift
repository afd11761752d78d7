/// When a live query whose evaluation failed is run again without waiting for a commit.
///
/// A failed evaluation — the store unreachable for a moment, a PostgreSQL server restarting — is run again at the
/// next commit that touches the query's collection. When no commit comes, the query is also run again after a wait
/// that grows with each failure in a row: by default 100 ms, 200 ms, 400 ms… up to 5 s, until it succeeds or its last
/// observer has gone. Each failure still reaches the observers' `onError:`; the first success after them is an
/// ordinary result (its event is the difference from the last good one).
///
/// ```swift
/// let retry = EvaluationRetry(initialDelay: .milliseconds(50), maximumDelay: .seconds(2))
/// let store = Store(documents, configuration: .init(retry: retry))
/// let patient = Store(documents, configuration: .init(retry: .atNextCommit))  // only a commit runs it again
/// ```
///
/// Values out of range are clamped rather than trusted: a negative delay means zero, a multiplier below 1 means 1, a
/// maximum below the first delay means the first delay.
public struct EvaluationRetry: Sendable, Hashable {
    /// The wait after the first failure.
    public var initialDelay: Duration
    /// How much longer each further wait is than the one before.
    public var multiplier: Double
    /// The longest wait.
    public var maximumDelay: Duration
    /// Whether failed queries are run again after a wait at all (false: only at the next commit).
    public var isEnabled: Bool

    /// Makes a policy: waits of `initialDelay`, × `multiplier` after each further failure, up to `maximumDelay`.
    public init(
        initialDelay: Duration = .milliseconds(100), multiplier: Double = 2, maximumDelay: Duration = .seconds(5)
    ) {
        self.initialDelay = max(.zero, initialDelay)
        self.multiplier = max(1, multiplier.isFinite ? multiplier : 1)
        self.maximumDelay = max(self.initialDelay, maximumDelay)
        self.isEnabled = true
    }

    /// 100 ms, doubling after each failure in a row, up to 5 s.
    public static let `default` = EvaluationRetry()

    /// No retry after a wait: a failed query is run again at the next commit that touches its collection.
    public static let atNextCommit: EvaluationRetry = {
        var retry = EvaluationRetry()
        retry.isEnabled = false
        return retry
    }()

    /// The wait before a query is run again after `failures` failures in a row (1 for the first); nil when retries are
    /// disabled.
    public func delay(afterFailures failures: Int) -> Duration? {
        guard isEnabled else { return nil }
        var delay = initialDelay
        for _ in 1..<max(1, failures) {
            delay = min(maximumDelay, delay * multiplier)
            if delay == maximumDelay { break }
        }
        return min(maximumDelay, delay)
    }
}
