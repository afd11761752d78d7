public import TransportKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Why a request failed, with what it was and where: the method, the URL (or the text that was not one), the
/// status, the server's error body, and the cause.
public struct ResourceError: Error, Sendable, CustomStringConvertible {
    /// The kinds of failure.
    ///
    /// A struct over a private enum, not a public enum: a kind added later breaks no user's exhaustive `switch`.
    /// Compare with `==` (`error.kind == .httpStatus(404)`), or read the detail a kind carries
    /// (``httpStatus``, ``transportKind``, ``failedStage``).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Value: Sendable, Hashable {
            case invalidURL
            case transport(TransportError.Kind)
            case httpStatus(Int)
            case notModifiedWithoutData
            case transformFailed(PipelineStageKey)
            case invalidRequestBody
            case tooManyPendingMutations
            case mutationNotQueued
            case cancelled
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The resource has no valid URL; ``ResourceError/url`` holds the text that was given.
        public static var invalidURL: Self { Self(.invalidURL) }
        /// The transport could not exchange the request.
        public static func transport(_ kind: TransportError.Kind) -> Self { Self(.transport(kind)) }
        /// The server answered with a status that is not a success.
        public static func httpStatus(_ code: Int) -> Self { Self(.httpStatus(code)) }
        /// The server answered 304 Not Modified, but there is no data to keep.
        public static var notModifiedWithoutData: Self { Self(.notModifiedWithoutData) }
        /// A transformer of the response pipeline failed at this stage.
        public static func transformFailed(_ stage: PipelineStageKey) -> Self { Self(.transformFailed(stage)) }
        /// The request's body could not be made (a value that does not encode); nothing was sent.
        public static var invalidRequestBody: Self { Self(.invalidRequestBody) }
        /// The service already has as many mutations pending as it allows (``Service/maxPendingMutations``); this
        /// one was not sent, and showed nothing.
        public static var tooManyPendingMutations: Self { Self(.tooManyPendingMutations) }
        /// A durable mutation could not be written to the outbox — none is configured, what it shows or invalidates
        /// cannot be stored, or the write failed (``ResourceError/cause`` holds the `PersistenceError`) — or its
        /// named optimistic update could not be made. Nothing was sent, and nothing shown.
        public static var mutationNotQueued: Self { Self(.mutationNotQueued) }
        /// The request was cancelled.
        public static var cancelled: Self { Self(.cancelled) }

        /// The status, for ``httpStatus(_:)``.
        public var httpStatus: Int? {
            if case .httpStatus(let code) = value { code } else { nil }
        }

        /// The transport's kind of failure, for ``transport(_:)``.
        public var transportKind: TransportError.Kind? {
            if case .transport(let kind) = value { kind } else { nil }
        }

        /// The stage that failed, for ``transformFailed(_:)``.
        public var failedStage: PipelineStageKey? {
            if case .transformFailed(let stage) = value { stage } else { nil }
        }

        /// `httpStatus(404)`, `transport(timedOut)`, `cancelled`…
        public var description: String {
            switch value {
            case .invalidURL: "invalidURL"
            case .transport(let kind): "transport(\(kind))"
            case .httpStatus(let code): "httpStatus(\(code))"
            case .notModifiedWithoutData: "notModifiedWithoutData"
            case .transformFailed(let stage): "transformFailed(\(stage))"
            case .invalidRequestBody: "invalidRequestBody"
            case .tooManyPendingMutations: "tooManyPendingMutations"
            case .mutationNotQueued: "mutationNotQueued"
            case .cancelled: "cancelled"
            }
        }
    }

    /// What went wrong.
    public var kind: Kind
    /// A message fit for a log, and for a user when nothing better is at hand.
    public var message: String
    /// The request's method.
    public var method: HTTPMethod
    /// The request's URL, or for ``Kind-swift.struct/invalidURL`` the text that was given.
    public var url: String
    /// The server's response body for ``Kind-swift.struct/httpStatus(_:)``, if it sent one.
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
        kind.httpStatus
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
