import Logging
public import PipelineKit
import URLSessionAdapter

/// `type: urlsession` — Foundation's URLSession (`FoundationNetworking` on Linux); nothing to shut down. Takes
/// ``HTTPTransportSettings``.
public struct URLSessionTransportPlugin: PipelinePlugin {
    /// "urlsession".
    public let type = "urlsession"

    /// Makes the plugin.
    public init() {}

    /// The adapter's defaults.
    public var defaultSettings: HTTPTransportSettings { HTTPTransportSettings() }

    /// A URLSession transport.
    public func make(_ settings: HTTPTransportSettings, context: AssemblyContext) throws -> TransportComponent {
        var logger = context.logger
        logger[metadataKey: "part"] = "transport.urlsession"
        let configuration = URLSessionTransport.Configuration(
            connectTimeout: settings.connectTimeout, redirects: settings.redirects,
            maxResponseSize: settings.maxResponseSize,
            maxConnectionsPerHost: settings.maxConnectionsPerHost, logger: logger)
        return TransportComponent(URLSessionTransport(configuration: configuration))
    }
}
