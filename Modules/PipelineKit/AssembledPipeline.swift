import DocumentStoreKit
public import EntityCacheKit
import Foundation
public import LiveQueryKit
public import Logging
public import MemoryPressureKit
public import MirrorKit
public import ResourceKit
public import ServiceLifecycle
public import TetherClock
import TetherConcurrency
import TransportKit
public import UnixSignals

/// The pipeline a configuration describes, assembled: the services and their resources' rules, the store live
/// queries run on, the persistent cache, the delivery defaults, the configured live queries — and the background
/// parts (memory-pressure monitor, HTTP clients, database files) as swift-service-lifecycle services that
/// ``serviceGroup(running:logger:signals:)`` starts in order and shuts down in reverse on SIGINT or SIGTERM.
///
/// ## Usage
///
/// 1. Load the configuration — every problem is reported here, before anything starts:
///    ```swift
///    let configuration = try ConfigurationLoader(registry: .standard).load(file: "configuration.yaml")
///    ```
/// 2. Assemble it:
///    ```swift
///    let pipeline = try AssembledPipeline.assemble(configuration)
///    ```
/// 3. Use the parts:
///    ```swift
///    let items = try pipeline.service(named: "demo").resource("/stores/abc123/items")
///    items.addObserver(owner: self, delivery: pipeline.resourceDelivery.resourcePolicy) { resource, event in … }
///    try pipeline.liveQuery(named: "abc-items").observe(owner: self) { documents, event, signalNext in … }
///    ```
/// 4. Run the background parts with your application, until a signal ends them:
///    ```swift
///    try await pipeline.serviceGroup(running: app, logger: logger).run()
///    ```
public final class AssembledPipeline: Sendable {
    /// Memory-pressure events so far (from the source or simulated), and how many resources they let go.
    package struct MemoryPressureStatistics: Sendable, Hashable {
        /// Events handled.
        package var events: Int
        /// Resources released by the flushes those events caused.
        package var resourcesReleased: Int
    }

    /// The configuration it was assembled from.
    package let configuration: PipelineConfiguration
    /// The services, in configuration order, each with the name it has under `services:`.
    public let services: [(name: String, service: ResourceKit.Service)]
    /// The store live queries run on.
    public let store: Store
    /// The persistence parts (store, cache, where they live).
    package let persistence: PersistenceComponent
    /// The persistent cache resources use, when persistence provides one.
    public let persistentCache: PersistentCache?
    /// How live queries are delivered unless they say otherwise.
    public let delivery: ObservationDelivery
    /// How resource observers should be delivered to (pass ``ObservationDelivery/resourcePolicy`` to `addObserver`).
    public let resourceDelivery: ObservationDelivery
    /// The configured live queries, by name.
    package let liveQueries: [String: ConfiguredLiveQuery]
    /// The configured memory-pressure source.
    package let memoryPressureSource: any MemoryPressureSource
    /// The background parts, in start order.
    package let lifecycleServices: [any ServiceLifecycle.Service]
    private let pressure: PressureResponder

    private init(
        configuration: PipelineConfiguration, services: [(name: String, service: ResourceKit.Service)], store: Store,
        persistence: PersistenceComponent, persistentCache: PersistentCache?, delivery: ObservationDelivery,
        resourceDelivery: ObservationDelivery, liveQueries: [String: ConfiguredLiveQuery],
        memoryPressureSource: any MemoryPressureSource, lifecycleServices: [any ServiceLifecycle.Service],
        pressure: PressureResponder
    ) {
        self.configuration = configuration
        self.services = services
        self.store = store
        self.persistence = persistence
        self.persistentCache = persistentCache
        self.delivery = delivery
        self.resourceDelivery = resourceDelivery
        self.liveQueries = liveQueries
        self.memoryPressureSource = memoryPressureSource
        self.lifecycleServices = lifecycleServices
        self.pressure = pressure
    }

    /// Builds the indexes `indexes:` declares, on the store, now (the service group does it when it starts;
    /// building one that exists does nothing). For an application that runs no `ServiceGroup`.
    public func createDeclaredIndexes() async throws {
        for index in configuration.indexes.compactMap(\.index) { try await store.documents.createIndex(index) }
    }

    /// The service named `name`.
    public func service(named name: String) throws(ConfigurationError) -> ResourceKit.Service {
        guard let service = services.first(where: { $0.name == name })?.service else {
            throw failure(.missingKey, at: "services", "no service named '\(name)'", configured: services.map(\.name))
        }
        return service
    }

    /// The live query named `name`.
    public func liveQuery(named name: String) throws(ConfigurationError) -> ConfiguredLiveQuery {
        guard let query = liveQueries[name] else {
            throw failure(
                .missingKey, at: "live_queries", "no live query named '\(name)'", configured: liveQueries.keys.sorted())
        }
        return query
    }

    /// Starts the mirror `mirrors:` names `name` (see MirrorKit's `ResourceMirror`): it writes its resource's data
    /// into its collection for as long as the caller holds it.
    ///
    /// - Throws: `ConfigurationError` when no mirror has that name.
    public func startMirror(named name: String) throws(ConfigurationError) -> ResourceMirror {
        guard let mirror = configuration.mirrors.first(where: { $0.name == name }) else {
            throw failure(
                .missingKey, at: "mirrors", "no mirror named '\(name)'", configured: configuration.mirrors.map(\.name))
        }
        // Loading checked that the service exists, or that there is only one.
        let service = mirror.service.flatMap { name in services.first { $0.name == name } } ?? services.first
        guard let service else {
            throw failure(.missingKey, at: "services", "no service for the mirror '\(name)'", configured: nil)
        }
        do {
            return try mirror.start(service: service.service, store: store)
        } catch {
            throw failure(.invalidValue, at: "mirrors", error.description, configured: nil)
        }
    }

    /// An error about this configuration: `message`, and what is configured, at `path`.
    private func failure(
        _ kind: ConfigurationError.Issue.Kind, at path: String, _ message: String, configured: [String]?
    ) -> ConfigurationError {
        let listed = configured.map { "; configured: " + $0.joined(separator: ", ") } ?? ""
        return ConfigurationError(
            file: configuration.file, issues: [.init(kind: kind, path: path, message: message + listed)])
    }

    /// Acts as the monitor does on a pressure event — every service flushes its unused resources — whatever the
    /// configured source; returns how many resources were let go.
    @discardableResult
    public func simulateMemoryPressure(_ level: MemoryPressureLevel = .warning, reason: String = "simulated") -> Int {
        pressure.respond(to: MemoryPressureEvent(level: level, reason: reason))
    }

    /// Pressure events so far (from the source or simulated), and how many resources they let go.
    package var memoryPressureStatistics: MemoryPressureStatistics {
        let (events, released) = pressure.statistics
        return MemoryPressureStatistics(events: events, resourcesReleased: released)
    }

    /// A `ServiceGroup` running the background parts in order, then `application` (if any); when the application
    /// returns, or on one of `signals` (SIGTERM and SIGINT unless you say otherwise; `[]` when your own group
    /// handles signals), they shut down in reverse order: the application first, the database last.
    public func serviceGroup(
        running application: (any ServiceLifecycle.Service)? = nil, logger: Logger,
        signals: [UnixSignal] = [.sigterm, .sigint]
    ) -> ServiceGroup {
        group(running: application, logger: logger, signals: signals)
    }

    /// Shuts the background parts down, in reverse order — the database last — for code that does not run them in
    /// ``serviceGroup(running:logger:signals:)``: the HTTP clients are shut down, the database is closed, the monitor stops.
    /// Parts already shut down by a service group are not shut down twice. The pipeline is not usable afterwards.
    public func shutdown(logger: Logger = Logger(label: "tether.pipeline")) async throws {
        let group = group(running: nil, logger: logger, signals: [])
        // Requested before it runs: the group starts the parts and shuts them down at once, in reverse.
        await group.triggerGracefulShutdown()
        try await group.run()
    }

    private func group(
        running application: (any ServiceLifecycle.Service)?, logger: Logger, signals: [UnixSignal]
    ) -> ServiceGroup {
        var services = lifecycleServices.map {
            ServiceGroupConfiguration.ServiceConfiguration(service: $0, successTerminationBehavior: .ignore)
        }
        if let application {
            services.append(
                .init(
                    service: application, successTerminationBehavior: .gracefullyShutdownGroup,
                    failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        // Last, so shut down first (a group shuts its services down in reverse): as shutdown begins, persistence ends
        // the waits that would hold it up, before the application is asked to stop.
        if let shutdownBegins = persistence.shutdownBegins {
            services.append(.init(service: ShutdownBegins(action: shutdownBegins), successTerminationBehavior: .ignore))
        }
        var configuration = ServiceGroupConfiguration(services: services, logger: logger)
        configuration.gracefulShutdownSignals = signals
        return ServiceGroup(configuration: configuration)
    }

    /// What assembly takes from code rather than configuration.
    package struct Defaults: Sendable {
        /// The base URL of services whose configuration gives none.
        package var baseURL: String?
        /// Where the parts log.
        package var logger: Logger
        /// The clock services use.
        package var timeSource: any TimeSource
    }

    /// Assembles `configuration`. A part that cannot be made (a database file that will not open) fails the whole
    /// assembly with an issue at that part's line; parts already made are let go.
    ///
    /// - Parameters:
    ///   - configuration: What ``ConfigurationLoader`` loaded.
    ///   - baseURL: The base URL of services whose configuration gives none (the sample's embedded server).
    ///   - logger: Where the parts log.
    ///   - timeSource: The clock services use.
    public static func assemble(
        _ configuration: PipelineConfiguration, baseURL: String? = nil,
        logger: Logger = Logger(label: "tether.pipeline"), timeSource: any TimeSource = SystemTimeSource()
    ) throws(ConfigurationError) -> AssembledPipeline {
        let defaults = Defaults(baseURL: baseURL, logger: logger, timeSource: timeSource)
        let context = AssemblyContext(
            baseDirectory: configuration.baseDirectory, logger: defaults.logger,
            environment: configuration.environment)
        var assembler = Assembler(configuration: configuration, context: context)
        let persistence = try assembler.make(configuration.persistence, at: ConfigurationPath([.key("persistence")]))
        if configuration.persistenceIsImplicit {
            defaults.logger.notice(
                "no persistence section: documents and the resource cache are in memory, and nothing survives the process; add `persistence: { type: sqlite }` to keep them in files"
            )
        }
        let store = Store(persistence.documents, logger: defaults.logger)
        let cache = persistence.entityCache.map { PersistentCache($0, logger: defaults.logger) }
        var lifecycle: [any ServiceLifecycle.Service] = persistence.lifecycle.map { [$0] } ?? []
        let indexes = configuration.indexes.compactMap(\.index)
        if !indexes.isEmpty {
            // Right after the database: queries started with the group find their indexes built, or being built, and
            // the builder stops before the database closes (a group shuts its services down in reverse).
            lifecycle.append(IndexBuilder(documents: persistence.documents, indexes: indexes))
        }

        var services: [(name: String, service: ResourceKit.Service)] = []
        for (name, serviceConfiguration) in configuration.services {
            let path = ConfigurationPath([.key("services"), .key(name)])
            let transport = try assembler.make(serviceConfiguration.transport, at: path.appending("transport"))
            if let part = transport.lifecycle { lifecycle.append(part) }
            let stages = try serviceConfiguration.resources.enumerated().map { index, rule throws(ConfigurationError) in
                try rule.stages.enumerated().map { stageIndex, stage throws(ConfigurationError) in
                    try assembler.make(
                        stage,
                        at: ConfigurationPath(
                            path.appending("resources").components + [
                                .index(index), .key("stages"), .index(stageIndex),
                            ]))
                }
            }
            if serviceConfiguration.mutations.durable, persistence.mutationOutbox == nil {
                throw assembler.failure(
                    at: path.appending("mutations").appending("durable"),
                    "mutations are durable, but the persistence keeps no outbox (its outbox is off): turn it on, or make durable false"
                )
            }
            let service = ServiceBuilder(
                name: name, configuration: serviceConfiguration,
                baseURL: serviceConfiguration.baseURL ?? defaults.baseURL,
                transport: transport.transport, stages: stages, cache: cache, outbox: persistence.mutationOutbox,
                countLimit: configuration.memoryPressure.countLimit, defaults: defaults
            ).build()
            services.append((name: name, service: service))
        }

        let source = try assembler.make(
            configuration.memoryPressure.source, at: ConfigurationPath([.key("memory_pressure"), .key("source")])
        ).source
        let pressure = PressureResponder(services: services.map { $0.service }, logger: defaults.logger)
        lifecycle.append(
            MemoryPressureService(MemoryPressureMonitor(source: source) { event in pressure.respond(to: event) }))

        let delivery = try assembler.make(
            configuration.delivery.default, at: ConfigurationPath([.key("delivery"), .key("default")]))
        let resourceDelivery =
            configuration.delivery.resources == nil
            ? delivery
            : try assembler.make(
                configuration.delivery.resources, at: ConfigurationPath([.key("delivery"), .key("resources")]))
        var liveQueries: [String: ConfiguredLiveQuery] = [:]
        for (index, query) in configuration.liveQueries.enumerated() {
            let path = ConfigurationPath([.key("live_queries"), .index(index), .key("delivery")])
            let queryDelivery = query.delivery == nil ? delivery : try assembler.make(query.delivery, at: path)
            liveQueries[query.name] = ConfiguredLiveQuery(
                name: query.name, query: query.pendingQuery(on: store), delivery: queryDelivery)
        }
        return AssembledPipeline(
            configuration: configuration, services: services, store: store, persistence: persistence,
            persistentCache: cache,
            delivery: delivery, resourceDelivery: resourceDelivery, liveQueries: liveQueries,
            memoryPressureSource: source,
            lifecycleServices: lifecycle, pressure: pressure)
    }
}

/// Makes parts, turning a failure into an issue at the part's line.
struct Assembler {
    let configuration: PipelineConfiguration
    let context: AssemblyContext

    mutating func make<Product>(_ choice: PluginChoice<Product>?, at path: ConfigurationPath) throws(ConfigurationError)
        -> Product
    {
        guard let choice else {
            throw failure(at: path, "no \(Product.role) is configured and the registry has no default")
        }
        do {
            return try choice.make(context: context)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw failure(at: path, "the \(Product.role) '\(choice.type)' could not be made: \(error)")
        }
    }

    func failure(at path: ConfigurationPath, _ message: String) -> ConfigurationError {
        var location = configuration.locations[path]
        var parent = path
        while location == nil, !parent.components.isEmpty {
            parent.components.removeLast()
            location = configuration.locations[parent]
        }
        return ConfigurationError(
            file: configuration.file,
            issues: [
                .init(
                    kind: .assemblyFailed, path: path.description, line: location?.line, column: location?.column,
                    message: message)
            ])
    }
}

/// Flushes every service's unused resources on a pressure event, and counts.
final class PressureResponder: Sendable {
    private let services: [ResourceKit.Service]
    private let logger: Logger
    private let counts = LockedValue<(events: Int, resourcesReleased: Int)>((0, 0))

    init(services: [ResourceKit.Service], logger: Logger) {
        self.services = services
        self.logger = logger
    }

    @discardableResult
    func respond(to event: MemoryPressureEvent) -> Int {
        let released = services.reduce(0) { $0 + $1.flushUnused() }
        counts.withLock {
            $0.events += 1
            $0.resourcesReleased += released
        }
        logger.info("memory pressure (\(event.reason)): \(released) unused resources let go")
        return released
    }

    var statistics: (events: Int, resourcesReleased: Int) {
        counts.withLock { $0 }
    }
}

/// Runs `action` once the service group begins to shut down, and ends.
struct ShutdownBegins: ServiceLifecycle.Service, CustomStringConvertible {
    let action: @Sendable () -> Void

    var description: String { "shutdown watch" }

    func run() async throws {
        try? await gracefulShutdown()
        action()
    }
}
