#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a ``Transport`` returns: the status, the header fields and the body of the response.
public struct TransportResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body (empty when there is none).
    public var body: Data

    /// Makes a response.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The largest body, once decoded, that Tether's transports hand over unless configured otherwise: 256 MiB.
    /// A larger one fails the exchange with ``TransportError/Kind-swift.struct/responseTooLarge`` instead of taking
    /// the process's memory.
    public static let defaultMaxSize = 256 << 20
}
