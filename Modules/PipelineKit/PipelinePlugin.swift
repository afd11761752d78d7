public import Foundation
public import Logging
import MemoryPressureKit

/// The role of a pipeline plugin: something configuration names by `type:` and that makes one part of the
/// pipeline (a transport, a persistence layer, a memory-pressure source, a delivery policy, a response stage) from
/// its typed `Settings`.
///
/// A plugin decodes its own `Settings` from the mapping beside `type:` (use ``SettingsContainer`` to report unknown
/// keys and bad values with their lines), and ``PluginRegistry`` resolves the name once, while the configuration
/// is loaded. Register your own with `PluginRegistry.register(_:)`:
///
/// ```swift
/// struct FixtureTransportPlugin: PipelinePlugin {
///     let type = "fixtures"
///     var defaultSettings: FixtureSettings { FixtureSettings() }
///     func make(_ settings: FixtureSettings, context: AssemblyContext) throws -> TransportComponent {
///         TransportComponent(FixtureTransport(directory: context.resolve(settings.directory)))
///     }
/// }
/// ```
public protocol PipelinePlugin<Product>: Sendable {
    /// The plugin's typed settings, decoded from the mapping beside `type:`.
    associatedtype Settings: Decodable & Sendable
    /// The part it makes; its type decides the role (``TransportComponent``, ``PersistenceComponent``,
    /// ``MemoryPressureComponent``, ``ObservationDelivery`` or ``ResponseStage``).
    associatedtype Product: PipelineComponent

    /// The name configuration uses in `type:`.
    var type: String { get }
    /// The settings when configuration gives only `type:`, or leaves the part out and this plugin is the default.
    var defaultSettings: Settings { get }
    /// Makes the part. Throw when the settings are valid but the part cannot be made (a file that will not open);
    /// the error is reported against the part's place in the configuration.
    func make(_ settings: Settings, context: AssemblyContext) throws -> Product
}

/// A kind of part that plugins make: ``TransportComponent``, ``PersistenceComponent``, ``MemoryPressureComponent``,
/// ``ObservationDelivery`` or ``ResponseStage``. The pipeline assembles these five; a plugin makes one of them.
public protocol PipelineComponent: Sendable {}

extension PipelineComponent {
    /// The kind's name in messages ("unknown transport type 'curl'").
    package static var role: String {
        switch Self.self {
        case is TransportComponent.Type: "transport"
        case is PersistenceComponent.Type: "persistence"
        case is MemoryPressureComponent.Type: "memory pressure"
        case is ObservationDelivery.Type: "delivery"
        case is ResponseStage.Type: "stage"
        default: String(describing: Self.self)
        }
    }
}

/// What a plugin may need while it makes its part.
public struct AssemblyContext: Sendable {
    /// The folder relative paths in the configuration are resolved against: the configuration file's folder.
    public var baseDirectory: URL
    /// The logger parts log to (each plugin may make a child with its own label).
    public var logger: Logger
    /// The environment the configuration was loaded with.
    public var environment: [String: String]

    /// Makes a context.
    package init(
        baseDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
        logger: Logger = Logger(label: "tether.pipeline"), environment: [String: String] = [:]
    ) {
        self.baseDirectory = baseDirectory
        self.logger = logger
        self.environment = environment
    }

    /// `path` if absolute, else `path` inside ``baseDirectory``.
    public func resolve(_ path: String) -> String {
        path.hasPrefix("/") ? path : baseDirectory.appendingPathComponent(path).path
    }
}
