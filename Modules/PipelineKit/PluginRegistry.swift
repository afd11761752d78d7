import TetherConcurrency

/// The plugins configuration can name, by role and `type:`, and which one a role uses when configuration leaves
/// it out.
///
/// ``core`` holds the plugins that need no adapter; `PipelinePlugins` adds `standard` with URLSession,
/// AsyncHTTPClient and SQLite. Add your own with `register(_:)`, before loading:
///
/// ```swift
/// let registry = PluginRegistry.standard
/// registry.register(DecodableStagePlugin<[Item]>(type: "items"))
/// let configuration = try ConfigurationLoader(registry: registry).load(file: "configuration.yaml")
/// ```
public final class PluginRegistry: Sendable {
    private struct Entry: Sendable {
        let plugin: any Sendable
        let decode: @Sendable (any Decoder) throws -> AnyComponentMaker
        let makeDefault: @Sendable () -> AnyComponentMaker
    }

    private let entries = LockedValue<[ObjectIdentifier: [String: Entry]]>([:])
    private let defaults = LockedValue<[ObjectIdentifier: String]>([:])
    private let sectionDecoders = LockedValue<[String: @Sendable (any Decoder) throws -> any Sendable]>([:])

    /// An empty registry.
    public init() {}

    /// A registry with the plugins that need no adapter: the `in-memory` transport, `memory` persistence, the
    /// `manual`, `linux-psi` and `resident-limit` pressure sources, the `immediate`, `next-signal` and
    /// `deliver-on-queue` delivery policies, and the `json` and `text` stages. Defaults: `memory` persistence,
    /// `linux-psi` pressure, `next-signal` delivery. (A fresh registry each time: registering on it changes no other.)
    public static var core: PluginRegistry {
        let registry = PluginRegistry()
        registry.register(InMemoryTransportPlugin())
        registry.register(MemoryPersistencePlugin(), isDefault: true)
        registry.register(ManualPressurePlugin())
        registry.register(PSIPressurePlugin(), isDefault: true)
        registry.register(ResidentLimitPressurePlugin())
        registry.register(ImmediateDeliveryPlugin())
        registry.register(NextSignalDeliveryPlugin(), isDefault: true)
        registry.register(DeliverOnQueuePlugin())
        registry.register(JSONStagePlugin())
        registry.register(TextStagePlugin())
        return registry
    }

    /// Registers `plugin` under its `type` for its role, replacing one of the same name; with `isDefault`, it is
    /// what the role uses when configuration leaves the part out.
    public func register<Plugin: PipelinePlugin>(_ plugin: Plugin, isDefault: Bool = false) {
        let role = ObjectIdentifier(Plugin.Product.self)
        let entry = Entry(
            plugin: plugin,
            decode: { decoder in
                let settings = try Plugin.Settings(from: decoder)
                return AnyComponentMaker(type: plugin.type) { context in try plugin.make(settings, context: context) }
            },
            makeDefault: {
                let settings = plugin.defaultSettings
                return AnyComponentMaker(type: plugin.type) { context in try plugin.make(settings, context: context) }
            })
        entries.withLock { $0[role, default: [:]][plugin.type] = entry }
        if isDefault { defaults.withLock { $0[role] = plugin.type } }
    }

    /// The `type:` names registered for `Product`'s role, sorted.
    package func types<Product: PipelineComponent>(for product: Product.Type) -> [String] {
        entries.withLock { $0[ObjectIdentifier(product)].map { Array($0.keys) } ?? [] }.sorted()
    }

    /// The `type:` a role uses when configuration leaves it out, if it has one.
    package func defaultType<Product: PipelineComponent>(for product: Product.Type) -> String? {
        defaults.withLock { $0[ObjectIdentifier(product)] }
    }

    /// Makes `type` the default for `Product`'s role (it must be registered).
    package func setDefault<Product: PipelineComponent>(_ type: String, for product: Product.Type) {
        defaults.withLock { $0[ObjectIdentifier(product)] = type }
    }

    /// Registers a top-level section of your own (`sample:` for the sample runner), decoded as `type`; the
    /// decoded value is ``PipelineConfiguration/section(_:as:)``.
    public func registerSection<Section: Decodable & Sendable>(_ name: String, as type: Section.Type) {
        sectionDecoders.withLock { $0[name] = { decoder in try Section(from: decoder) } }
    }

    var sections: [String: @Sendable (any Decoder) throws -> any Sendable] {
        sectionDecoders.withLock { $0 }
    }

    func decoder<Product: PipelineComponent>(for type: String, of product: Product.Type) -> (
        @Sendable (any Decoder) throws -> AnyComponentMaker
    )? {
        entries.withLock { $0[ObjectIdentifier(product)]?[type]?.decode }
    }

    func defaultMaker<Product: PipelineComponent>(for product: Product.Type) -> AnyComponentMaker? {
        guard let type = defaultType(for: product) else { return nil }
        return entries.withLock { $0[ObjectIdentifier(product)]?[type]?.makeDefault() }
    }
}

/// A resolved plugin and its decoded settings, ready to make its part.
struct AnyComponentMaker: Sendable {
    let type: String
    let make: @Sendable (AssemblyContext) throws -> any PipelineComponent
}
