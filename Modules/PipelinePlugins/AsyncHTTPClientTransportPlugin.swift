import AsyncHTTPClientAdapter
import Logging
public import PipelineKit

/// `type: async-http-client` — swift-server's AsyncHTTPClient, with a client of its own that the pipeline's
/// `ServiceGroup` shuts down. Takes ``HTTPTransportSettings``. The default transport of `PluginRegistry.standard`.
public struct AsyncHTTPClientTransportPlugin: PipelinePlugin {
    /// "async-http-client".
    public let type = "async-http-client"

    /// Makes the plugin.
    public init() {}

    /// The adapter's defaults.
    public var defaultSettings: HTTPTransportSettings { HTTPTransportSettings() }

    /// An AsyncHTTPClient transport, which is also the service that shuts its client down.
    public func make(_ settings: HTTPTransportSettings, context: AssemblyContext) throws -> TransportComponent {
        var logger = context.logger
        logger[metadataKey: "part"] = "transport.async-http-client"
        let transport = AsyncHTTPClientTransport(
            configuration: .init(
                connectTimeout: settings.connectTimeout, redirects: settings.redirects,
                maxResponseSize: settings.maxResponseSize,
                maxConnectionsPerHost: settings.maxConnectionsPerHost, logger: logger))
        return TransportComponent(transport, lifecycle: transport)
    }
}
