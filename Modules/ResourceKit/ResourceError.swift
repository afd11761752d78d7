public import Foundation
public import TransportKit

/// Why a request failed, with what it was and where: the method, the URL (or the text that was not one), the
/// status, the server's error body, and the cause.
public struct ResourceError: Error, Sendable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Kind: Sendable, Hashable {
        /// The resource has no valid URL; ``ResourceError/url`` holds the text that was given.
        case invalidURL
        /// The transport could not exchange the request.
        case transport(TransportError.Kind)
        /// The server answered with a status that is not a success.
        case httpStatus(Int)
        /// The server answered 304 Not Modified, but there is no data to keep.
        case notModifiedWithoutData
        /// A transformer of the response pipeline failed at this stage.
        case transformFailed(PipelineStageKey)
        /// The request's body could not be made (a value that does not encode); nothing was sent.
        case invalidRequestBody
        /// The request was cancelled.
        case cancelled
    }

    /// What went wrong.
    public var kind: Kind
    /// A message fit for a log, and for a user when nothing better is at hand.
    public var message: String
    /// The request's method.
    public var method: HTTPMethod
    /// The request's URL, or for ``Kind-swift.enum/invalidURL`` the text that was given.
    public var url: String
    /// The server's response body for ``Kind-swift.enum/httpStatus(_:)``, if it sent one.
    public var entity: Entity?
    /// When the failure happened.
    public var timestamp: Date
    /// The underlying error (a `TransportError`, a `DecodingError`, a transformer's own), if any.
    public var cause: (any Error)?

    /// Makes an error.
    public init(
        _ kind: Kind, message: String, method: HTTPMethod, url: String, entity: Entity? = nil, timestamp: Date,
        cause: (any Error)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.method = method
        self.url = url
        self.entity = entity
        self.timestamp = timestamp
        self.cause = cause
    }

    /// The HTTP status, when the server answered with a failure status.
    public var httpStatusCode: Int? {
        if case .httpStatus(let code) = kind { code } else { nil }
    }

    /// Whether this is a cancellation.
    public var isCancellation: Bool {
        kind == .cancelled
    }

    /// `METHOD url: message`.
    public var description: String {
        "\(method) \(url): \(message)"
    }
}
