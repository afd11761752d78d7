public import Logging
public import TetherClock

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A transport that sends through `base` and tries again as its ``RetryPolicy`` says — so every transport, ours
/// or a user's, gets the same retries.
///
/// ```swift
/// let transport = AsyncHTTPClientTransport(configuration: .init()).retrying(.default)
/// ```
///
/// What comes back is the last attempt's: a response (a 503 after the last attempt is still a response) or a
/// ``TransportError`` whose ``TransportError/attempts`` says how many attempts were made. Waits run on the
/// `TimeSource`, so a test drives them with a manual clock; cancelling the calling task cancels the attempt in
/// flight or the wait, and throws ``TransportError/Kind-swift.struct/cancelled``.
public struct RetryingTransport: Transport {
    /// The transport each attempt goes through.
    public let base: any Transport
    /// When to try again.
    public let policy: RetryPolicy
    private let timeSource: any TimeSource
    private let logger: Logger
    private let random: @Sendable () -> Double

    /// Wraps `base`. Waits run on `timeSource`; retries are logged at `info` on `logger`; `random` draws the
    /// jitter (uniform in 0..<1 by default; pass a constant to make waits exact).
    public init(
        _ base: any Transport, policy: RetryPolicy = .default, timeSource: any TimeSource = SystemTimeSource(),
        logger: Logger = Logger(label: "tether.transport.retry"),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.base = base
        self.policy = policy
        self.timeSource = timeSource
        self.logger = logger
        self.random = random
    }

    /// Sends `request`, retrying as the policy allows.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await send(request, progress: nil)
    }

    /// Sends `request`, retrying as the policy allows; each attempt reports its progress afresh.
    public func send(_ request: TransportRequest, progress: TransportProgressHandler?) async throws
        -> TransportResponse
    {
        let start = timeSource.now
        let retriable = policy.retries(request)
        var attempt = 1
        while true {
            var attemptRequest = request
            let remaining = policy.timeLimit - .seconds(timeSource.now.timeIntervalSince(start))
            if attempt > 1 { attemptRequest.timeout = min(request.timeout, max(remaining, .milliseconds(1))) }

            let wait: Duration
            let reason: String
            do {
                let response = try await base.send(attemptRequest, progress: progress)
                guard retriable, attempt < policy.attemptLimit, policy.statuses.contains(response.status) else {
                    return response
                }
                if let asked = policy.retryAfter(in: response.headers, now: timeSource.now) {
                    guard asked <= policy.maxRetryAfter else { return response }
                    wait = asked
                } else {
                    wait = policy.backoff(afterAttempt: attempt, random: random())
                }
                reason = "status \(response.status)"
                guard fitsBudget(wait, start: start) else { return response }
            } catch {
                var failure = transportError(error, request: request)
                failure.attempts = attempt
                guard retriable, attempt < policy.attemptLimit, policy.errors.contains(failure.kind) else {
                    throw failure
                }
                wait = policy.backoff(afterAttempt: attempt, random: random())
                reason = failure.kind.name
                guard fitsBudget(wait, start: start) else { throw failure }
            }

            // Normal operation, and a final failure reaches the caller: debug (swift-log's guidance for libraries).
            logger.debug(
                "retrying",
                metadata: TransportLog.metadata(for: request).merging([
                    "retry.attempt": .stringConvertible(attempt + 1),
                    "retry.reason": .string(reason),
                    "retry.wait_ms": .stringConvertible(Int(wait.timeInterval * 1000)),
                ]) { $1 }
            )
            do {
                if wait > .zero { try await timeSource.sleep(for: wait) }
                try Task.checkCancellation()
            } catch {
                throw TransportError(
                    .cancelled, method: request.method, url: request.url,
                    message: "cancelled while waiting to retry", attempts: attempt, cause: error)
            }
            attempt += 1
        }
    }

    private func fitsBudget(_ wait: Duration, start: Date) -> Bool {
        .seconds(timeSource.now.timeIntervalSince(start)) + wait < policy.timeLimit
    }

    private func transportError(_ error: any Error, request: TransportRequest) -> TransportError {
        switch error {
        case let error as TransportError: error
        case is CancellationError: TransportError(.cancelled, request: request, message: "cancelled", cause: error)
        default: TransportError(.other, request: request, message: "\(error)", cause: error)
        }
    }
}

extension Transport {
    /// This transport behind a ``RetryingTransport`` with `policy`.
    public func retrying(
        _ policy: RetryPolicy = .default, timeSource: any TimeSource = SystemTimeSource(),
        logger: Logger = Logger(label: "tether.transport.retry")
    ) -> RetryingTransport {
        RetryingTransport(self, policy: policy, timeSource: timeSource, logger: logger)
    }
}
