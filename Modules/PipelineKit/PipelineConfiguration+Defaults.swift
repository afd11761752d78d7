extension PipelineConfiguration {
    /// Fills every part configuration left out with the registry's default for its role; a role with no default
    /// (a transport, when no transport plugin is the default) is a missing key.
    mutating func resolveDefaults(in registry: PluginRegistry) -> [IssueLog.Entry] {
        var missing: [IssueLog.Entry] = []
        func choose<Product>(_ choice: inout PluginChoice<Product>?, at path: ConfigurationPath, key: String) {
            guard choice == nil else { return }
            choice = PluginChoice<Product>.defaultChoice(in: registry)
            if choice == nil {
                let known = registry.types(for: Product.self).joined(separator: ", ")
                missing.append(
                    .init(
                        kind: .missingKey, path: path, pointsAtKey: false,
                        message: "missing key '\(key)': there is no default \(Product.role); choose one of \(known)"))
            }
        }
        // No `persistence:` section at all: nothing is written to disk unasked (an empty configuration once made two
        // SQLite files in the working folder).
        if persistence == nil {
            persistence = PluginChoice(MemoryPersistencePlugin())
            persistenceIsImplicit = true
        }
        choose(&memoryPressure.source, at: ConfigurationPath([.key("memory_pressure")]), key: "source")
        choose(&delivery.default, at: ConfigurationPath([.key("delivery")]), key: "default")
        if delivery.resources == nil { delivery.resources = delivery.default }
        for index in services.indices {
            choose(
                &services[index].configuration.transport,
                at: ConfigurationPath([.key("services"), .key(services[index].name)]), key: "transport")
        }
        for index in liveQueries.indices where liveQueries[index].delivery == nil {
            liveQueries[index].delivery = delivery.default
        }
        return missing
    }
}
