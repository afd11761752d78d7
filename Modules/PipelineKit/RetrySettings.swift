package import TransportKit

/// How a service retries failed requests (`retry:`), turned into TransportKit's `RetryPolicy`.
///
/// ```yaml
/// retry:
///   attempts: 3            # in all, the first included; 1 turns retries off
///   initial_backoff: 200ms
///   max_backoff: 10s
///   max_total_time: 30s
///   statuses: [429, 502, 503, 504]
/// ```
package struct RetrySettings: Decodable, Sendable, Hashable {
    /// The policy.
    package var policy: RetryPolicy

    /// Settings for `policy` (by default TransportKit's: three attempts within 30 s).
    package init(policy: RetryPolicy = .default) {
        self.policy = policy
    }

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case attempts
        case maxTotalTime = "max_total_time"
        case initialBackoff = "initial_backoff"
        case backoffMultiplier = "backoff_multiplier"
        case maxBackoff = "max_backoff"
        case jitter, statuses
        case honorsRetryAfter = "honors_retry_after"
        case maxRetryAfter = "max_retry_after"
    }

    /// Decodes the settings, each with TransportKit's default.
    package init(from decoder: any Decoder) throws {
        let settings = try decoder.settings(CodingKeys.self)
        var policy = RetryPolicy.default
        policy.maxAttempts = try settings.decode(
            .attempts, default: policy.maxAttempts, where: { $0 >= 1 }, "must be at least 1")
        policy.maxTotalTime = try settings.duration(.maxTotalTime, default: policy.maxTotalTime)
        policy.initialBackoff = try settings.duration(.initialBackoff, default: policy.initialBackoff, allowsZero: true)
        policy.backoffMultiplier = try settings.decode(
            .backoffMultiplier, default: policy.backoffMultiplier, where: { $0 >= 1 }, "must be at least 1")
        policy.maxBackoff = try settings.duration(.maxBackoff, default: policy.maxBackoff, allowsZero: true)
        policy.jitter = try settings.decode(
            .jitter, default: policy.jitter, where: { (0...1).contains($0) }, "must be from 0 to 1")
        policy.statuses = Set(
            try settings.decode(
                .statuses, default: Array(policy.statuses), where: { $0.allSatisfy { (100...599).contains($0) } },
                "must be HTTP statuses (100-599)"))
        policy.honorsRetryAfter = try settings.decode(.honorsRetryAfter, default: policy.honorsRetryAfter)
        policy.maxRetryAfter = try settings.duration(.maxRetryAfter, default: policy.maxRetryAfter, allowsZero: true)
        self.policy = policy
    }
}
