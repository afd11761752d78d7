public import Foundation

/// Why a request could not be exchanged: which request it was, how many attempts were made, and what the transport
/// underneath reported.
///
/// Every transport throws this one type, so that code above the transport — `ResourceKit`, a ``RetryingTransport``,
/// an app — can decide what to do from ``kind`` without knowing which library carried the request.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The URL cannot be sent (no scheme or host, a scheme the transport does not speak).
        case invalidURL
        /// The host's name did not resolve (DNS failure).
        case hostNotFound
        /// The host refused the connection (nothing listens on that port).
        case connectionRefused
        /// A connection could not be made, or it broke before the response was complete — for instance the server
        /// closed it in the middle of the body.
        case connectionFailed
        /// The exchange took longer than its timeout (the request's, or the transport's connect timeout).
        case timedOut
        /// The calling task was cancelled.
        case cancelled
        /// The peer sent something that is not a valid HTTP response.
        case malformedResponse
        /// The TLS handshake failed: an untrusted or invalid certificate, no common protocol version or cipher.
        case tlsFailure
        /// The response body is larger than the transport accepts.
        case responseTooLarge
        /// The server redirected more often than the transport's redirect policy allows, or in a cycle.
        case tooManyRedirects
        /// Nothing answers this request (an in-memory transport with no matching route).
        case noRoute
        /// Anything else the transport reports.
        case other

        /// Whether a fresh attempt could succeed where this one failed: the connection broke, was refused or timed
        /// out. ``RetryPolicy`` retries these by default.
        public var isTransient: Bool {
            switch self {
            case .connectionRefused, .connectionFailed, .timedOut: true
            default: false
            }
        }
    }

    /// What went wrong.
    public var kind: Kind
    /// The method of the failed request.
    public var method: HTTPMethod
    /// The URL of the failed request.
    public var url: URL
    /// A human-readable account, including the underlying error's, if any.
    public var message: String
    /// How many attempts were made, this one included (more than one only behind a ``RetryingTransport``).
    public var attempts: Int
    /// What the transport underneath reported (a `URLError`, an `HTTPClientError`, an `IOError`…), if anything.
    ///
    /// Not part of equality: two errors are equal when kind, request, message and attempts are.
    public var cause: (any Error & Sendable)?

    /// Makes an error.
    public init(
        _ kind: Kind, method: HTTPMethod, url: URL, message: String, attempts: Int = 1,
        cause: (any Error & Sendable)? = nil
    ) {
        self.kind = kind
        self.method = method
        self.url = url
        self.message = message
        self.attempts = attempts
        self.cause = cause
    }

    /// Makes an error for `request`.
    public init(_ kind: Kind, request: TransportRequest, message: String, cause: (any Error & Sendable)? = nil) {
        self.init(kind, method: request.method, url: request.url, message: message, cause: cause)
    }

    /// `METHOD url: message`, with the attempt count when there was more than one. Credentials in the URL are
    /// redacted.
    public var description: String {
        let attemptsNote = attempts > 1 ? " (after \(attempts) attempts)" : ""
        return "\(method) \(url.redactedForLogging): \(message)\(attemptsNote)"
    }

    /// Equal kind, method, URL, message and attempt count.
    public static func == (lhs: TransportError, rhs: TransportError) -> Bool {
        lhs.kind == rhs.kind && lhs.method == rhs.method && lhs.url == rhs.url && lhs.message == rhs.message
            && lhs.attempts == rhs.attempts
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(message)
        hasher.combine(attempts)
    }
}
