public import PipelineKit

extension PluginRegistry {
    /// `PluginRegistry.core` plus the adapters' plugins: the `urlsession` and `async-http-client` transports
    /// and `sqlite` and `postgres` persistence. Defaults: `async-http-client` transport, `sqlite` persistence. (A fresh registry
    /// each time.)
    public static var standard: PluginRegistry {
        let registry = PluginRegistry.core
        registry.register(URLSessionTransportPlugin())
        registry.register(AsyncHTTPClientTransportPlugin(), isDefault: true)
        registry.register(SQLitePersistencePlugin(), isDefault: true)
        registry.register(PostgresPersistencePlugin())
        return registry
    }
}
