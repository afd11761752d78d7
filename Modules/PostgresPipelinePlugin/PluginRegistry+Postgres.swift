public import PipelineKit

extension PluginRegistry {
    /// Registers `type: postgres` persistence (``PostgresPersistencePlugin``) in this registry, and returns it.
    ///
    /// The plugin lives in a target of its own so that a program that does not use PostgreSQL does not compile
    /// postgres-nio and swift-crypto: `PluginRegistry.standard` (PipelinePlugins) leaves it out.
    ///
    /// ```swift
    /// let registry = PluginRegistry.standard.withPostgres()
    /// ```
    @discardableResult
    public func withPostgres() -> PluginRegistry {
        register(PostgresPersistencePlugin())
        return self
    }
}
