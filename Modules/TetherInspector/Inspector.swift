import Hummingbird
public import LiveQueryKit
public import Logging
public import ResourceKit
public import ServiceLifecycle
public import TetherClock
import TetherConcurrency

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A small HTTP server that shows, live in a browser, which observers are alive, who owns them, which resources are
/// held and why, and which results wait for a slow consumer.
///
/// It serves a JSON API (`GET /api/v1/inspection`, described in the repository's `Docs/Inspector.md`) and a page over it (`GET /`), from
/// the same server, with no build step and nothing from the network. It listens on 127.0.0.1 unless told otherwise
/// (and then only with a token). Run it as a service beside your app; it inspects only when asked — a page polling
/// once a second, paused while its tab is hidden — and costs nothing otherwise.
///
/// ```swift
/// let inspector = try Inspector(configuration: InspectorConfiguration(port: 7070), logger: logger)
/// inspector.watch(service, named: "api")
/// inspector.watch(store, named: "items")
/// let group = ServiceGroup(services: [inspector, app], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()  // http://127.0.0.1:7070
/// ```
public final class Inspector: ServiceLifecycle.Service, Sendable {
    struct Watched: Sendable {
        var services: [(name: String, service: ResourceKit.Service)] = []
        var stores: [(name: String, store: Store)] = []
    }

    /// Where it listens, and the token.
    public let configuration: InspectorConfiguration
    let logger: Logger
    let watched = LockedValue(Watched())
    let timeSource: any TimeSource
    /// When each observation alive at the last inspection was first seen.
    let ages = LockedValue(ObservationAges())
    let bound = BoundPort()

    /// Makes an inspector; it listens once ``run()`` is called.
    ///
    /// - Throws: ``InspectorError`` for an address other than loopback without a token, a port out of range or an
    ///   empty token.
    ///
    /// - Parameters:
    ///   - configuration: Where it listens (loopback and a free port by default), and the token it asks for.
    ///   - logger: Where it logs what it serves and refuses.
    ///   - timeSource: The clock for the document's `takenAt` and the owners' ages (a `ManualTimeSource` in tests).
    public init(
        configuration: InspectorConfiguration = InspectorConfiguration(),
        logger: Logger = Logger(label: "tether.inspector"), timeSource: any TimeSource = .system
    ) throws(InspectorError) {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        self.timeSource = timeSource
    }

    /// Shows `service`'s resources under `name`.
    public func watch(_ service: ResourceKit.Service, named name: String) {
        watched.withLock { $0.services.append((name, service)) }
    }

    /// Shows `store`'s live queries under `name`.
    public func watch(_ store: Store, named name: String) {
        watched.withLock { $0.stores.append((name, store)) }
    }

    /// Everything watched, as it is now: what `GET /api/v1/inspection` returns.
    package func inspect() -> InspectionDocument {
        let watched = watched.withLock { $0 }
        let services = watched.services.map {
            InspectionDocument.NamedService(name: $0.name, service: $0.service.inspect())
        }
        let stores = watched.stores.map { InspectionDocument.NamedStore(name: $0.name, store: $0.store.inspect()) }
        let now = timeSource.now
        return ages.withLock { ages in
            InspectionDocument(takenAt: now, services: services, stores: stores, ages: &ages)
        }
    }

    /// The port it listens on, once it does (nil if it stopped before).
    public func port() async -> Int? {
        await bound.value()
    }

    /// Serves until graceful shutdown or cancellation — both end it gracefully: it stops accepting, answers the
    /// requests it has (for up to a second) and closes. (Cancelling Hummingbird's server outright can drop a
    /// connection accepted at that moment, which SwiftNIO traps on.)
    ///
    /// - Throws: ``InspectorError`` of kind `cannotListen` when the address cannot be listened on.
    public func run() async throws {
        let application = Application(
            router: makeRouter(),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "tether-inspector"),
            onServerRunning: { [bound, logger, configuration] channel in
                let port = channel.localAddress?.port ?? configuration.port
                bound.set(port)
                logger.info("inspector listening", metadata: ["url": "http://\(configuration.host):\(port)/"])
            },
            logger: logger)
        defer { bound.set(nil) }
        var groupConfiguration = ServiceGroupConfiguration(services: [application], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(1)
        let group = ServiceGroup(configuration: groupConfiguration)
        // In a task of its own, so that cancelling this one reaches the server as a graceful shutdown.
        let serving = Task { try await group.run() }
        let stop: @Sendable () -> Void = { Task { await group.triggerGracefulShutdown() } }
        let outcome = await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await serving.result
            } onGracefulShutdown: {
                stop()
            }
        } onCancel: {
            stop()
        }
        if case .failure(let error) = outcome {
            throw InspectorError(
                .cannotListen(host: configuration.host, port: configuration.port, detail: "\(error)"))
        }
    }
}

/// The port, once the server listens: waited for by ``Inspector/port()``.
final class BoundPort: Sendable {
    struct State: Sendable {
        var port: Int??
        var waiters: [CheckedContinuation<Int?, Never>] = []
    }

    let state = LockedValue(State())

    /// Records the port (nil: the server stopped) the first time; wakes the waiters.
    func set(_ port: Int?) {
        let waiters = state.withLock { state -> [CheckedContinuation<Int?, Never>] in
            guard state.port == nil else { return [] }
            state.port = .some(port)
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: port) }
    }

    func value() async -> Int? {
        await withCheckedContinuation { continuation in
            let known = state.withLock { state -> Int?? in
                if let port = state.port { return .some(port) }
                state.waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }
}
