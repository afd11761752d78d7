/// Why a request could not be exchanged, and which request it was.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Kind: Sendable, Hashable {
        /// The URL cannot be sent (no scheme or host, a scheme the transport does not speak).
        case invalidURL
        /// No connection could be made, or it broke.
        case connectionFailed
        /// The exchange took longer than the request's timeout.
        case timedOut
        /// The calling task was cancelled.
        case cancelled
        /// Nothing answers this request (an in-memory transport with no matching route).
        case noRoute
        /// Anything else the transport reports.
        case other
    }

    /// What went wrong.
    public var kind: Kind
    /// The method of the failed request.
    public var method: HTTPMethod
    /// The URL of the failed request.
    public var url: URL
    /// A human-readable account, including the underlying error's, if any.
    public var message: String

    /// Makes an error.
    public init(_ kind: Kind, method: HTTPMethod, url: URL, message: String) {
        self.kind = kind
        self.method = method
        self.url = url
        self.message = message
    }

    /// Makes an error for `request`.
    public init(_ kind: Kind, request: TransportRequest, message: String) {
        self.init(kind, method: request.method, url: request.url, message: message)
    }

    /// `METHOD url: message`.
    public var description: String { "\(method) \(url.absoluteString): \(message)" }
}
