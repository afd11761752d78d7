import Logging
import MemoryPressureKit
import OwnershipKit
import RegistryKit
import Synchronization
import TetherClock
import TetherConcurrency
import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a ``Service`` is made of: the transport, the clock, the configuration rules and the cache of resources.
///
/// Resources hold their core, not their `Service`, so that a dropped `Service` is freed at once: its `deinit` tells
/// the core to stop retaining resources, and those nobody references go with it. `Service` is the public face.
final class ServiceCore: Sendable {
    /// The base URL that ``resource(_:)`` paths are appended to, if it is valid.
    let baseURL: URL?
    /// The transport that carries requests.
    let transport: any Transport
    /// The clock that timestamps data and decides staleness.
    let timeSource: any TimeSource
    /// The loggers.
    let logging: ResourceLogging

    /// The base URL's absolute string without its query, fragment or trailing slash, when the base URL is valid.
    let base: String?
    /// The base URL's query, with its `?` (empty when it has none): Siesta keeps it on every resource below the base,
    /// after the path (`https://api.example.com/v1?key=abc` + `/foo` is `https://api.example.com/v1/foo?key=abc`).
    let baseQuery: String
    /// Why the base URL given is unusable, if it is.
    let baseProblem: String?
    let resources: Registry<String, Resource>
    let rules: LockedValue<[ConfigurationRule]>
    /// Bumped by every configuration change, so that resources recompute their configurations.
    let configurationGeneration = Atomic<UInt64>(1)
    /// How many mutations are pending, and how many may be.
    let mutations = LockedValue((pending: 0, limit: 1_000))
    /// The durable mutations: the outbox, their lanes and waits, the named optimistic updates.
    let durable: DurableMutations
    /// The mutations as snapshots, for ``Service/mutations``.
    let tracker = MutationTracker()

    /// Makes a service.
    ///
    /// - Parameters:
    ///   - baseURL: The URL that ``resource(_:)`` paths are appended to. An invalid one (no scheme or host) is logged
    ///     and makes every ``resource(_:)`` an invalid resource whose loads fail saying so; nil leaves only
    ///     ``resource(absoluteURL:)-(URL?)``.
    ///   - transport: What carries requests.
    ///   - timeSource: The clock. Defaults to the system's.
    ///   - standardTransformers: Which standard transformers every resource gets. Defaults to text and JSON.
    ///   - cacheCountLimit: How many resources the cache holds before creating one flushes unused ones. Default 2048.
    ///   - logging: The loggers.
    init(
        baseURL: String?, transport: any Transport, timeSource: any TimeSource = SystemTimeSource(),
        standardTransformers: StandardTransformers = .all, cacheCountLimit: Int = 2048,
        logging: ResourceLogging = ResourceLogging()
    ) {
        self.transport = transport
        self.timeSource = timeSource
        self.logging = logging
        durable = DurableMutations(logger: logging.stateChanges)
        resources = Registry(configuration: .init(countLimit: cacheCountLimit), isInUse: { $0.hasObservers })
        if let baseURL {
            let url = URL(string: baseURL)
            let problem = url.map(ResourceAddress.problem(with:)) ?? "\"\(baseURL)\" is not a valid URL"
            if let url, problem == nil {
                self.baseURL = url
                // The path goes between the base's path and its query; a fragment is never sent, and is dropped.
                let absolute = url.absoluteString
                let query = absolute.firstIndex(of: "?").map { start in
                    String(absolute[start..<(absolute[start...].firstIndex(of: "#") ?? absolute.endIndex)])
                }
                var base = ResourceAddress.withoutQuery(url)
                while base.hasSuffix("/") { base.removeLast() }
                self.base = base
                baseQuery = query == "?" ? "" : query ?? ""
                baseProblem = nil
            } else {
                self.baseURL = nil
                base = nil
                baseQuery = ""
                baseProblem = "the service's base URL is unusable: " + (problem ?? "")
                // Each resource's loads fail saying so; the log only traces it.
                logging.configuration.debug("\(baseProblem ?? "")")
            }
        } else {
            self.baseURL = nil
            base = nil
            baseQuery = ""
            baseProblem = "the service has no base URL: use resource(absoluteURL:) for this resource"
        }
        var standard = Pipeline()
        if standardTransformers.contains(.text) {
            standard[.parsing].add(TextTransformer(), contentTypes: ["text/*"])
        }
        if standardTransformers.contains(.json) {
            standard[.parsing].add(JSONTransformer(), contentTypes: ["application/json", "*/*+json"])
        }
        let pipeline = standard
        rules = LockedValue([
            ConfigurationRule(
                pattern: .all, methods: nil, description: "standard transformers",
                configurer: { $0.pipeline = pipeline })
        ])
        LifetimeTracking.made(self, "service \(base ?? "(no base URL)")")
    }

    /// The live public face, if there is one.
    let face = LockedValue(WeakService())
    /// The memory-pressure events responded to, for an inspector.
    let pressure = LockedValue(MemoryPressureRecord())

    /// The live `Service` for this core, or a new one if the one it was made with is gone (resources outlive their
    /// service only while referenced). Held strongly by the caller, never released under the lock.
    func service() -> Service {
        face.withLock { face in
            if let service = face.service { return service }
            let service = Service(core: self)
            face.service = service
            resources.resumeRetaining()
            return service
        }
    }

    /// The public face was deallocated: stop retaining resources, unless a new face exists already.
    func faceReleased() {
        face.withLock { face in
            guard face.service == nil else { return }
            resources.stopRetaining()
        }
        logging.cache.debug("service released: resources are held only by their users now")
    }

    // MARK: The cache

    /// Makes every resource not in use (no observers) eligible for deallocation, and deallocates those nobody else
    /// references; returns how many the cache stopped holding. Observers whose owners are gone are swept first.
    @discardableResult
    func flushUnused() -> Int {
        for resource in resources.allInstances() { resource.observersIfAny?.sweep() }
        let released = resources.flushUnused()
        logging.cache.debug("flushed unused resources", metadata: ["released": "\(released)"])
        return released
    }

    /// How many resources are alive and in the cache.
    var cachedResourceCount: Int {
        resources.count
    }

    /// The cache's count limit, settable at run time: lowered below the number of live resources, it flushes at once.
    var cacheCountLimit: Int {
        get { resources.countLimit }
        set {
            resources.countLimit = newValue
            logging.cache.debug("count limit set", metadata: ["limit": "\(resources.countLimit)"])
        }
    }

    /// Counts a mutation as pending; nil when the limit is reached (then it is not counted), else the new count.
    func beginMutation() -> Int? {
        mutations.withLock { mutations in
            guard mutations.pending < mutations.limit else { return nil }
            mutations.pending += 1
            return mutations.pending
        }
    }

    /// Counts a pending mutation as settled.
    func endMutation() {
        mutations.withLock { $0.pending -= 1 }
    }

    /// Wipes every live resource matching `pattern` (see ``Resource/wipe()``), then flushes unused resources.
    func wipeResources(matching pattern: ConfigurationPattern = .all) {
        let isMatch = matcher(for: [pattern])
        wipeResources(where: isMatch)
    }

    /// Whether a resource matches one of `patterns` (a resource with no valid URL matches only `all`).
    func matcher(for patterns: [ConfigurationPattern]) -> (Resource) -> Bool {
        let compiled = patterns.map { $0.compiled(base: base) }
        return { resource in
            guard let url = resource.url else {
                return compiled.contains { if case .all = $0 { true } else { false } }
            }
            let withoutQuery = ResourceAddress.withoutQuery(url)
            return compiled.contains { $0.matches(url, withoutQuery: withoutQuery) }
        }
    }

    /// Invalidates every live resource matching one of `patterns` but `resource`, and reloads those that have
    /// observers: after a mutation, what it names is stale, and what is on screen is brought up to date.
    func invalidate(matching patterns: [ConfigurationPattern], besides resource: Resource) {
        guard !patterns.isEmpty else { return }
        let isMatch = matcher(for: patterns)
        for other in resources.allInstances() where other !== resource && isMatch(other) {
            other.invalidate()
            if other.hasObservers { other.loadIfNeeded() }
        }
    }

    /// Wipes every live resource for which `predicate` is true, then flushes unused resources.
    func wipeResources(where predicate: (Resource) -> Bool) {
        for resource in resources.allInstances() where predicate(resource) { resource.wipe() }
        flushUnused()
    }

    /// A monitor that flushes this service's unused resources whenever `source` reports memory pressure. Run it in
    /// a task group or a `ServiceGroup` (its `run()` returns when cancelled).
    func memoryPressureMonitor(source: any MemoryPressureSource) -> MemoryPressureMonitor {
        MemoryPressureMonitor(source: source) { [weak self] event in
            self?.respond(to: event, from: source.name)
        }
    }

    /// What the service does on a memory-pressure event: flush unused resources, and say so.
    @discardableResult
    func respond(to event: MemoryPressureEvent, from source: String) -> Int {
        let released = flushUnused()
        let now = timeSource.now
        pressure.withLock { record in
            record.record(
                source: source, level: "\(event.level)", reason: event.reason, released: released, at: now)
        }
        logging.cache.info(
            "memory pressure: flushed unused resources",
            metadata: ["released": "\(released)", "source": "\(source)", "reason": "\(event.reason)"])
        return released
    }
}

/// A weak reference to a core's public face.
struct WeakService: Sendable {
    weak var service: Service?
}
