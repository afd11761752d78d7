import RegistryKit
public import ServiceLifecycle

/// A background part that does its work when the pipeline's `ServiceGroup` shuts down (closing a database,
/// shutting a client down): it waits for graceful shutdown or cancellation, then runs `action` once.
public struct ShutdownAction: ServiceLifecycle.Service, CustomStringConvertible {
    /// What it shuts down, for logs.
    public let description: String
    private let action: @Sendable () async throws -> Void

    /// Makes one.
    public init(_ description: String, action: @escaping @Sendable () async throws -> Void) {
        self.description = description
        self.action = action
    }

    /// Waits for shutdown, then acts.
    public func run() async throws {
        try? await gracefulShutdown()
        try await action()
    }
}

/// A `MemoryPressureMonitor` as a swift-service-lifecycle service: it watches until the group shuts down.
struct PressureMonitorService: ServiceLifecycle.Service, CustomStringConvertible {
    let monitor: MemoryPressureMonitor

    var description: String { "memory pressure (\(monitor.source.name))" }

    func run() async throws {
        let monitor = monitor
        await cancelWhenGracefulShutdown { await monitor.run() }
    }
}
