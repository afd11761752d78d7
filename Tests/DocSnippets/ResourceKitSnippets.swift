import Foundation
// The examples of Docs/ResourceKit.md and Docs/RegistryKit.md, compiled (see OwnershipKitSnippets.swift).
import MemoryPressureKit
import RegistryKit
import ResourceKit
import TransportKit

struct User: Codable, Sendable {
    var name: String
}

final class UserScreen: Sendable {
    let service: Service

    init(service: Service) {
        self.service = service
    }

    func show(_ user: User?, loading: Bool, error: ResourceError?) {}

    func observe() {
        // snippet: ResourceKit.observe
        service.resource("/users/42")
            .addObserver(owner: self) { [weak self] resource, event in
                self?.show(
                    resource.typedContent(as: User.self), loading: resource.isLoading, error: resource.latestError)
            }
            .loadIfNeeded()
        // end snippet
    }
}

enum ResourceKitSnippets {
    static func makeService(transport: any Transport) -> Service {
        // snippet: ResourceKit.make-service
        let service = Service(baseURL: "https://api.example.com/v1", transport: transport)
        // end snippet
        return service
    }

    static func configure(service: Service, token: String) {
        // snippet: ResourceKit.configure
        service.configure { $0.headers["Authorization"] = "Bearer \(token)" }
        service.configure("/items/**") { $0.expirationTime = .seconds(300) }
        service.configureModel(User.self, for: "/users/*")
        // end snippet
    }

    static func memoryPressure(service: Service) -> Task<Void, Never> {
        // snippet: ResourceKit.memory-pressure
        let monitor = service.memoryPressureMonitor(source: PSIMemoryPressureSource())
        let task = Task { await monitor.run() }  // or in a ServiceGroup: PipelineKit's MemoryPressureService(monitor)
        // end snippet
        return task
    }
}

/// A cached thing with observers, as RegistryKit's example keeps.
final class CachedItem: Sendable {
    let url: URL
    init(url: URL) { self.url = url }
    var hasObservers: Bool { false }
}

enum RegistryKitSnippets {
    static func registry() -> Registry<URL, CachedItem> {
        // snippet: RegistryKit.make-registry
        let items = Registry<URL, CachedItem>(configuration: .init(countLimit: 2048)) { $0.hasObservers }
        // end snippet
        return items
    }

    static func monitor(items: Registry<URL, CachedItem>) -> Task<Void, Never> {
        // snippet: RegistryKit.monitor
        let monitor = MemoryPressureMonitor(source: PSIMemoryPressureSource()) { _ in items.flushUnused() }
        let task = Task { await monitor.run() }  // or in a ServiceGroup; cancel the task to stop
        // end snippet
        return task
    }
}
