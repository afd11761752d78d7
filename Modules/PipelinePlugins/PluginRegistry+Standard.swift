public import PipelineKit

extension PluginRegistry {
    /// `PluginRegistry.core` plus the adapters' plugins that need no server: the `urlsession` and
    /// `async-http-client` transports and `sqlite` persistence. Defaults: `async-http-client` transport, `sqlite`
    /// persistence. (A fresh registry each time.) `postgres` persistence is in the PostgresPipelinePlugin product
    /// (`.standard.withPostgres()`), so that a program without PostgreSQL does not compile its client.
    public static var standard: PluginRegistry {
        let registry = PluginRegistry.core
        registry.register(URLSessionTransportPlugin())
        registry.register(AsyncHTTPClientTransportPlugin(), isDefault: true)
        registry.register(SQLitePersistencePlugin(), isDefault: true)
        return registry
    }
}
