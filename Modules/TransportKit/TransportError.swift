#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Why a request could not be exchanged: which request it was, how many attempts were made, and what the transport
/// underneath reported.
///
/// Every transport throws this one type, so that code above the transport — `ResourceKit`, a ``RetryingTransport``,
/// an app — can decide what to do from ``kind`` without knowing which library carried the request.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        // A struct over a private enum, not a public enum: a kind added later breaks no user's exhaustive
        // `switch` (compare with `==`, or switch with a `default:`).
        private enum Value: String, Sendable, Hashable, CaseIterable {
            case invalidURL, hostNotFound, connectionRefused, connectionFailed, timedOut, cancelled, malformedResponse,
                tlsFailure, responseTooLarge, tooManyRedirects, noRoute, other
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The URL cannot be sent (no scheme or host, a scheme the transport does not speak).
        public static var invalidURL: Self { Self(.invalidURL) }
        /// The host's name did not resolve (DNS failure).
        public static var hostNotFound: Self { Self(.hostNotFound) }
        /// The host refused the connection (nothing listens on that port).
        public static var connectionRefused: Self { Self(.connectionRefused) }
        /// A connection could not be made, or it broke before the response was complete — for instance the server
        /// closed it in the middle of the body.
        public static var connectionFailed: Self { Self(.connectionFailed) }
        /// The exchange took longer than its timeout (the request's, or the transport's connect timeout).
        public static var timedOut: Self { Self(.timedOut) }
        /// The calling task was cancelled.
        public static var cancelled: Self { Self(.cancelled) }
        /// The peer sent something that is not a valid HTTP response.
        public static var malformedResponse: Self { Self(.malformedResponse) }
        /// The TLS handshake failed: an untrusted or invalid certificate, no common protocol version or cipher.
        public static var tlsFailure: Self { Self(.tlsFailure) }
        /// The response body is larger than the transport accepts.
        public static var responseTooLarge: Self { Self(.responseTooLarge) }
        /// The server redirected more often than the transport's redirect policy allows, or in a cycle.
        public static var tooManyRedirects: Self { Self(.tooManyRedirects) }
        /// Nothing answers this request (an in-memory transport with no matching route).
        public static var noRoute: Self { Self(.noRoute) }
        /// Anything else the transport reports.
        public static var other: Self { Self(.other) }

        /// The kind's name, as logs and messages show it: "invalidURL".
        public var name: String { value.rawValue }

        /// ``name``.
        public var description: String { name }

        /// Every kind this version knows, for tests and tables.
        package static var allCases: [Self] { Value.allCases.map(Self.init) }

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
    public var cause: (any Error)?

    /// Makes an error.
    public init(
        _ kind: Kind, method: HTTPMethod, url: URL, message: String, attempts: Int = 1,
        cause: (any Error)? = nil
    ) {
        self.kind = kind
        self.method = method
        self.url = url
        self.message = message
        self.attempts = attempts
        self.cause = cause
    }

    /// Makes an error for `request`.
    public init(_ kind: Kind, request: TransportRequest, message: String, cause: (any Error)? = nil) {
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
