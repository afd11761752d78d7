package import Foundation
import MemoryPressureKit

/// A whole pipeline as `configuration.yaml` describes it, decoded into typed parts with every `type:` resolved.
/// Load one with ``ConfigurationLoader``, then ``AssembledPipeline/assemble(_:baseURL:logger:timeSource:)`` it.
///
/// The top-level keys: `services`, `persistence`, `memory_pressure`, `delivery`, `live_queries`, `indexes`, `mirrors`,
/// and any
/// section registered with ``PluginRegistry/registerSection(_:as:)`` (the sample's `sample:`).
public struct PipelineConfiguration: Decodable, Sendable {
    /// The services, in file order.
    package var services: [(name: String, configuration: ServiceConfiguration)]
    /// Persistence. Loading fills it in with `memory` when the file has no `persistence:` section: nothing is
    /// written to disk unasked.
    package var persistence: PluginChoice<PersistenceComponent>?
    /// Whether the file had no `persistence:` section, so that persistence is in memory (assembly says so).
    package var persistenceIsImplicit = false
    /// Memory pressure.
    package var memoryPressure: MemoryPressureConfiguration
    /// Delivery defaults.
    package var delivery: DeliveryConfiguration
    /// The live queries, in file order.
    package var liveQueries: [LiveQueryConfiguration]
    /// The indexes the store builds, in file order.
    package var indexes: [IndexConfiguration]
    /// The resources mirrored into collections, in file order.
    package var mirrors: [MirrorConfiguration]
    /// Registered extra sections, decoded, by name.
    package var sections: [String: any Sendable]
    /// The file it came from, if any.
    package var file: String?
    /// The folder relative paths are resolved against (the file's folder).
    package var baseDirectory: URL
    /// Where each key is in the file, for messages about parts that fail to assemble.
    package var locations: [ConfigurationPath: ConfigurationLocation]
    /// The environment the parts may read (a password's variable, say): the one ``ConfigurationLoader`` was given,
    /// so that loading and assembly see the same; the process's for a configuration made in code.
    package var environment: [String: String]

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case services, persistence
        case memoryPressure = "memory_pressure"
        case delivery
        case liveQueries = "live_queries"
        case indexes, mirrors
    }

    /// A configuration with no services and every default.
    package init() {
        services = []
        persistence = nil
        memoryPressure = MemoryPressureConfiguration()
        delivery = DeliveryConfiguration()
        liveQueries = []
        indexes = []
        mirrors = []
        sections = [:]
        file = nil
        baseDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        locations = [:]
        environment = ProcessInfo.processInfo.environment
    }

    /// Decodes a configuration (use ``ConfigurationLoader``, which supplies the plugins and reports every problem).
    public init(from decoder: any Decoder) throws {
        self.init()
        let registry = decoder.userInfo[.tetherPluginRegistry] as? PluginRegistry
        let sectionTypes = registry?.sections ?? [:]
        let settings = try decoder.settings(CodingKeys.self, alsoAllowing: Set(sectionTypes.keys))
        if let servicesDecoder = try settings.nestedDecoder(.services) {
            services = try Self.decodeServices(servicesDecoder)
        }
        persistence = try settings.decode(.persistence, as: PluginChoice<PersistenceComponent>.self)
        memoryPressure = try settings.decode(.memoryPressure, default: memoryPressure)
        delivery = try settings.decode(.delivery, default: delivery)
        liveQueries = try settings.decodeList(.liveQueries, as: LiveQueryConfiguration.self)
        indexes = try settings.decodeList(.indexes, as: IndexConfiguration.self)
        mirrors = try settings.decodeList(.mirrors, as: MirrorConfiguration.self)
        try checkMirrors(settings)
        var names = Set<String>()
        for (index, query) in liveQueries.enumerated() where !names.insert(query.name).inserted {
            let first = liveQueries.firstIndex { $0.name == query.name } ?? 0
            try settings.invalid(
                at: [.key("live_queries"), .index(index), .key("name")],
                "the name '\(query.name)' is already used by live_queries[\(first)]; each live query needs its own")
        }
        let container = try? decoder.container(keyedBy: ConfigurationKey.self)
        for (name, decode) in sectionTypes {
            guard let key = ConfigurationKey(stringValue: name), let container, container.contains(key) else {
                continue
            }
            do {
                sections[name] = try decode(try container.superDecoder(forKey: key))
            } catch let problem as ConfigurationProblem {
                if decoder.userInfo[.tetherIssueLog] == nil { throw problem }
            }
        }
    }

    /// Each mirror's name is its own, and its service is one the file declares.
    private func checkMirrors(_ settings: SettingsContainer<CodingKeys>) throws {
        var names = Set<String>()
        for (index, mirror) in mirrors.enumerated() {
            if !names.insert(mirror.name).inserted {
                let first = mirrors.firstIndex { $0.name == mirror.name } ?? 0
                try settings.invalid(
                    at: [.key("mirrors"), .index(index), .key("name")],
                    "the name '\(mirror.name)' is already used by mirrors[\(first)]; each mirror needs its own")
            }
            let declared = services.map(\.name)
            if let service = mirror.service, !declared.contains(service) {
                try settings.invalid(
                    at: [.key("mirrors"), .index(index), .key("service")],
                    "no service named '\(service)'; configured: \(declared.joined(separator: ", "))")
            } else if mirror.service == nil, declared.count != 1 {
                try settings.invalid(
                    at: [.key("mirrors"), .index(index)],
                    "say which service the resource is on (service:); configured: \(declared.joined(separator: ", "))")
            }
        }
    }

    /// The registered section `name`, decoded, if the configuration has it.
    public func section<Section: Sendable>(_ name: String, as type: Section.Type = Section.self) -> Section? {
        sections[name] as? Section
    }

    /// The service named `name`.
    package func service(named name: String) -> ServiceConfiguration? {
        services.first { $0.name == name }?.configuration
    }

    private static func decodeServices(_ decoder: any Decoder) throws -> [(
        name: String, configuration: ServiceConfiguration
    )] {
        let log = decoder.userInfo[.tetherIssueLog] as? IssueLog
        let path = ConfigurationPath(codingPath: decoder.codingPath)
        guard let container = try? decoder.container(keyedBy: ConfigurationKey.self) else {
            let entry = IssueLog.Entry(
                kind: .wrongType, path: path, pointsAtKey: false,
                message: "expected a mapping of service names to their settings")
            guard let log else { throw ConfigurationProblem(entry: entry) }
            log.record(entry)
            return []
        }
        var services: [(name: String, configuration: ServiceConfiguration)] = []
        for key in container.allKeys {
            do {
                services.append((key.stringValue, try container.decode(ServiceConfiguration.self, forKey: key)))
            } catch let problem as ConfigurationProblem {
                if log == nil { throw problem }
            } catch let error as DecodingError {
                let entry = SettingsContainer<CodingKeys>.entry(
                    for: error, at: path.appending(key.stringValue), expecting: ServiceConfiguration.self)
                guard let log else { throw ConfigurationProblem(entry: entry) }
                log.record(entry)
            }
        }
        return services
    }
}
