import Foundation
// The examples of Docs/ResourceKit.md and Docs/RegistryKit.md, compiled (see OwnershipKitSnippets.swift).
import MemoryPressureKit
import RegistryKit
import ResourceKit
import SQLiteAdapter
import Synchronization
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

// snippet: ResourceKit.token-refresh
/// Keeps the API token; refreshes it once however many requests find it expired.
final class Authentication: Sendable {
    private let service: Service
    private let token = Mutex("")
    private let refreshing = Mutex<Request?>(nil)

    init(service: Service) {
        self.service = service
        // The service keeps these closures and this object keeps the service: capture it weakly.
        service.configure("/api/**") { [weak self] configuration in
            guard let self else { return }
            configuration.headers["Authorization"] = "Bearer " + token.withLock { $0 }
            configuration.decorateRequests { [weak self] _, request in
                request.chained { [weak self] outcome in
                    guard outcome.error?.httpStatusCode == 401, let self else { return .useThisResponse }
                    return .passTo(
                        refresh().chained { refreshed in
                            refreshed.error == nil ? .passTo(request.repeated()) : .useThisResponse
                        })
                }
            }
        }
    }

    /// The refresh in flight, or a new one.
    func refresh() -> Request {
        refreshing.withLock { current in
            if let current, !current.isCompleted { return current }
            let refresh = service.resource("/auth/token").request(.post, text: "refresh")
            refresh.onSuccess { [weak self] entity in
                guard let self else { return }
                token.withLock { $0 = entity.typedContent(as: String.self) ?? "" }
                service.invalidateConfiguration()  // every request from now on carries the new token
            }
            current = refresh
            return refresh
        }
    }
}
// end snippet

enum RequestSnippets {
    static func loadUsing(profile: Resource, edited: User) {
        // snippet: ResourceKit.load-using
        let save = profile.request(.put, json: edited)
        profile.load(using: save)  // the server's answer to the PUT becomes the profile's data; observers are told
        // end snippet
    }
}

enum MutationSnippets {
    static func edit(profile: Resource, edited: User) {
        // snippet: ResourceKit.mutate-put
        profile.mutate(.put, json: edited, optimistic: .replacing(with: edited), onSuccess: .useResponse)
            .onFailure { error in print("not saved: \(error)") }  // the profile shows what it showed before
        // end snippet
    }

    static func add(service: Service, draft: User) async {
        // snippet: ResourceKit.mutate-post
        let users = service.resource("/users")
        let outcome = await users.mutate(
            .post, json: draft,
            optimistic: .updating { (list: [User]?) in (list ?? []) + [draft] },
            invalidates: ["/teams/*/members"]
        ).outcome
        // end snippet
        _ = outcome
    }

    static func durable(service: Service, draft: User, directory: String) throws {
        // snippet: ResourceKit.mutate-durable
        service.mutationConfiguration.outbox = try SQLiteMutationOutbox(path: directory + "/outbox.sqlite")
        service.defineOptimisticUpdate("append-user") { body in
            let user = try JSONDecoder().decode(User.self, from: body ?? Data())
            return .updating { (list: [User]?) in (list ?? []) + [user] }
        }
        try service.resumeMutations()  // what a previous run left: shown again, sent in order

        service.resource("/users").mutate(.post, json: draft, optimistic: .named("append-user"), durable: true)
        // end snippet
    }
}
