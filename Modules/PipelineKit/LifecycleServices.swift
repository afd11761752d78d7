import DocumentStoreKit
public import MemoryPressureKit
public import ServiceLifecycle
import TetherConcurrency

/// A background part that does its work when the pipeline's `ServiceGroup` shuts down (closing a database,
/// shutting a client down): it waits for graceful shutdown or cancellation, then runs `action` — once, however many
/// times the part is run (a service group, then ``AssembledPipeline/shutdown(logger:)``).
package struct ShutdownAction: ServiceLifecycle.Service, CustomStringConvertible {
    /// What it shuts down, for logs.
    package let description: String
    private let action: @Sendable () async throws -> Void
    private let done = LockedValue(false)

    /// Makes one.
    package init(_ description: String, action: @escaping @Sendable () async throws -> Void) {
        self.description = description
        self.action = action
    }

    /// Waits for shutdown, then acts (unless it already has).
    package func run() async throws {
        try? await gracefulShutdown()
        let first = done.withLock { done in
            defer { done = true }
            return !done
        }
        if first { try await action() }
    }
}

/// Builds the indexes of `indexes:` when the pipeline's service group starts, then waits for shutdown. It runs after
/// the database's part, so the group stops it before the database closes: on shutdown it finishes the index it is
/// building and begins no other (those are built at the next start; queries are right without them, only slower).
struct IndexBuilder: ServiceLifecycle.Service, CustomStringConvertible {
    let documents: any DocumentStore
    let indexes: [DocumentIndex]

    var description: String { "indexes (\(indexes.map(\.description).joined(separator: ", ")))" }

    func run() async throws {
        for index in indexes {
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            try await documents.createIndex(index)
        }
        try? await gracefulShutdown()
    }
}

/// A `MemoryPressureMonitor` as a swift-service-lifecycle service: it watches until the group shuts down. RegistryKit
/// depends on nothing third-party, so the conformance lives here, beside the other lifecycle parts:
///
/// ```swift
/// let monitor = service.memoryPressureMonitor(source: PSIMemoryPressureSource())
/// let group = ServiceGroup(services: [MemoryPressureService(monitor), app], logger: logger)
/// ```
public struct MemoryPressureService: ServiceLifecycle.Service, CustomStringConvertible {
    /// The monitor it runs.
    public let monitor: MemoryPressureMonitor

    /// Runs `monitor` as a service.
    public init(_ monitor: MemoryPressureMonitor) {
        self.monitor = monitor
    }

    /// Names the source, for logs.
    public var description: String { "memory pressure (\(monitor.source.name))" }

    /// Watches until graceful shutdown or cancellation.
    public func run() async throws {
        let monitor = monitor
        await cancelWhenGracefulShutdown { await monitor.run() }
    }
}
