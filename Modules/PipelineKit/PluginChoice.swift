/// One part of the pipeline as configuration chose it: a `type:` resolved to its plugin, and that plugin's
/// decoded settings. Decoding looks the type up in the ``PluginRegistry`` the loader was given; an unknown type is
/// reported with the known ones.
///
/// ```yaml
/// transport:
///   type: async-http-client
///   connect_timeout: 5s
/// ```
package struct PluginChoice<Product: PipelineComponent>: Decodable, Sendable, CustomStringConvertible {
    /// The `type:` name.
    package let type: String
    let maker: AnyComponentMaker

    init(maker: AnyComponentMaker) {
        self.type = maker.type
        self.maker = maker
    }

    /// The registry's default for this role, with its default settings; nil when the role has no default.
    package static func defaultChoice(in registry: PluginRegistry) -> PluginChoice? {
        registry.defaultMaker(for: Product.self).map { PluginChoice(maker: $0) }
    }

    /// A plugin and settings given in code.
    package init<Plugin: PipelinePlugin>(_ plugin: Plugin, settings: Plugin.Settings? = nil)
    where Plugin.Product == Product {
        let settings = settings ?? plugin.defaultSettings
        self.init(
            maker: AnyComponentMaker(type: plugin.type) { context in try plugin.make(settings, context: context) })
    }

    /// Decodes `type:` and hands the mapping to that plugin's settings.
    package init(from decoder: any Decoder) throws {
        let path = ConfigurationPath(codingPath: decoder.codingPath)
        let log = decoder.userInfo[.tetherIssueLog] as? IssueLog
        guard let registry = decoder.userInfo[.tetherPluginRegistry] as? PluginRegistry else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "a \(Product.role) choice can only be decoded by ConfigurationLoader, which knows the plugins"))
        }
        func fail(_ entry: IssueLog.Entry) throws -> Never {
            log?.record(entry)
            throw ConfigurationProblem(entry: entry)
        }
        let container: KeyedDecodingContainer<ConfigurationKey>
        do {
            container = try decoder.container(keyedBy: ConfigurationKey.self)
        } catch {
            try fail(
                .init(
                    kind: .wrongType, path: path, pointsAtKey: false, message: "expected a mapping with a 'type:' key"))
        }
        let known = registry.types(for: Product.self)
        let typeKey = ConfigurationKey(stringValue: "type")!
        guard let type = try? container.decodeIfPresent(String.self, forKey: typeKey) else {
            let choices = known.joined(separator: ", ")
            if container.contains(typeKey) {
                try fail(
                    .init(
                        kind: .wrongType, path: path.appending("type"), pointsAtKey: false,
                        message: "'type' must be text naming a \(Product.role): one of \(choices)"))
            }
            try fail(
                .init(
                    kind: .missingKey, path: path, pointsAtKey: false,
                    message: "missing key 'type': name a \(Product.role), one of \(choices)"))
        }
        guard let decode = registry.decoder(for: type, of: Product.self) else {
            var message = "unknown \(Product.role) type '\(type)'"
            let list = known.isEmpty ? "none registered" : known.joined(separator: ", ")
            if let suggestion = SettingsContainer<NoKeys>.closest(to: type, among: Set(known)) {
                message += "; did you mean '\(suggestion)'? Known types: " + list
            } else {
                message += "; known types: " + list
            }
            try fail(.init(kind: .unknownType, path: path.appending("type"), pointsAtKey: false, message: message))
        }
        log?.markPluginMapping(path)
        let maker = try decode(decoder)
        self.init(maker: maker)
    }

    /// Makes the part.
    package func make(context: AssemblyContext) throws -> Product {
        // The registry files each maker under its product's role, so the cast cannot fail.
        guard let product = try maker.make(context) as? Product else {
            throw ConfigurationError(
                file: nil,
                issues: [
                    .init(
                        kind: .assemblyFailed, path: "",
                        message: "plugin '\(type)' made something other than a \(Product.role)")
                ])
        }
        return product
    }

    /// `type`.
    package var description: String { type }
}

/// No keys: for did-you-mean over names that are not keys.
enum NoKeys: String, CodingKey, CaseIterable {
    case none
}
