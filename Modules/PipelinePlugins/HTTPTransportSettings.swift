import PipelineKit
public import TransportKit

/// The settings both HTTP transport plugins take (`urlsession`, `async-http-client`).
///
/// ```yaml
/// transport:
///   type: async-http-client
///   connect_timeout: 10s          # the longest wait for a connection
///   redirects: 5                  # how many to follow; 0 follows none
///   max_response_size: 256MiB     # a larger body fails the request
///   max_connections_per_host: 8
/// ```
public struct HTTPTransportSettings: Decodable, Sendable {
    /// The longest wait for a connection.
    public var connectTimeout: Duration
    /// Which redirects are followed.
    public var redirects: RedirectPolicy
    /// The largest response body accepted.
    public var maxResponseSize: Int
    /// How many connections to one host may be open at once.
    public var maxConnectionsPerHost: Int

    /// The keys.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case connectTimeout = "connect_timeout"
        case redirects
        case maxResponseSize = "max_response_size"
        case maxConnectionsPerHost = "max_connections_per_host"
    }

    /// The adapters' defaults: 10 s, five redirects, 256 MiB, 8 connections.
    public init() {
        connectTimeout = .seconds(10)
        redirects = .default
        maxResponseSize = TransportResponse.defaultMaxSize
        maxConnectionsPerHost = 8
    }

    /// Decodes the settings.
    public init(from decoder: any Decoder) throws {
        self.init()
        let settings = try decoder.settings(CodingKeys.self)
        connectTimeout = try settings.duration(.connectTimeout, default: connectTimeout)
        let hops = try settings.decode(
            .redirects, default: 5, where: { (0...50).contains($0) }, "must be from 0 (follow none) to 50")
        redirects = hops == 0 ? .never : .follow(max: hops)
        if let size = try settings.decode(.maxResponseSize, as: ByteCountSetting.self)?.bytes {
            if size > 0 {
                maxResponseSize = size
            } else {
                try settings.invalid(.maxResponseSize, "must be more than zero (found \(size))")
            }
        }
        maxConnectionsPerHost = try settings.decode(
            .maxConnectionsPerHost, default: maxConnectionsPerHost, where: { $0 >= 1 }, "must be at least 1")
    }
}
