import ConcurrencyHelpers
import OwnershipKit
import Logging
public import RegistryKit
import Synchronization
public import TransportKit

/// A remote API: the one place that hands out its resources, at most one ``Resource`` per URL, and configures them.
///
/// ```swift
/// let service = Service(baseURL: "https://api.example.com/v1", transport: transport)
/// service.configure("/items/**") { $0.expirationTime = .seconds(60) }
/// let items = service.resource("/items")          // the same instance every time, from any thread
/// items.addObserver(owner: self) { resource, event in render(resource.latestData) }
/// items.loadIfNeeded()
/// ```
///
/// The lifecycle rules, Siesta's:
/// - At most one `Resource` per service per URL exists at a time, however many threads ask at once.
/// - A resource is eligible for deallocation if and only if it has no observers and no strong references from
///   outside the service.
/// - Eligible resources are deallocated only when the cache is flushed: ``flushUnused()`` (called by a
///   ``MemoryPressureMonitor`` under memory pressure — see ``memoryPressureMonitor(source:)``), the cache's count
///   limit, or ``wipeResources(matching:)``. Until then they keep their data, ready for the next lookup.
///
/// A resource holds its service strongly, so a service lives as long as any of its resources is referenced.
public final class Service: Sendable, CustomStringConvertible {
    /// The base URL that ``resource(_:)`` paths are appended to, if it is valid.
    public let baseURL: URL?
    /// The transport that carries requests.
    public let transport: any Transport
    /// The clock that timestamps data and decides staleness.
    public let timeSource: any TimeSource
    /// The loggers.
    public let logging: ResourceLogging

    /// The base URL's absolute string without a trailing slash, when the base URL is valid.
    let base: String?
    /// Why the base URL given is unusable, if it is.
    let baseProblem: String?
    let resources: Registry<String, Resource>
    let rules: LockedValue<[ConfigurationRule]>
    /// Bumped by every configuration change, so that resources recompute their configurations.
    let configurationGeneration = Atomic<UInt64>(1)

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
    public init(
        baseURL: String?, transport: any Transport, timeSource: any TimeSource = SystemTimeSource(),
        standardTransformers: StandardTransformers = .all, cacheCountLimit: Int = 2048,
        logging: ResourceLogging = ResourceLogging()
    ) {
        self.transport = transport
        self.timeSource = timeSource
        self.logging = logging
        resources = Registry(configuration: .init(countLimit: cacheCountLimit), isInUse: { $0.hasObservers })
        if let baseURL {
            let url = URL(string: baseURL)
            let problem = url.map(ResourceAddress.problem(with:)) ?? "\"\(baseURL)\" is not a valid URL"
            if let url, problem == nil {
                self.baseURL = url
                var base = url.absoluteString
                while base.hasSuffix("/") { base.removeLast() }
                self.base = base
                baseProblem = nil
            } else {
                self.baseURL = nil
                base = nil
                baseProblem = "the service's base URL is unusable: " + (problem ?? "")
                logging.configuration.error("\(baseProblem ?? "")")
            }
        } else {
            self.baseURL = nil
            base = nil
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
    }

    /// Makes a service whose base URL is `baseURL` (see ``init(baseURL:transport:timeSource:standardTransformers:cacheCountLimit:logging:)-(String?,_,_,_,_,_)``).
    public convenience init(
        baseURL: URL?, transport: any Transport, timeSource: any TimeSource = SystemTimeSource(),
        standardTransformers: StandardTransformers = .all, cacheCountLimit: Int = 2048,
        logging: ResourceLogging = ResourceLogging()
    ) {
        self.init(
            baseURL: baseURL?.absoluteString, transport: transport, timeSource: timeSource,
            standardTransformers: standardTransformers, cacheCountLimit: cacheCountLimit, logging: logging)
    }

    /// The service's base URL, or a note that it has none.
    public var description: String {
        "Service(\(base ?? "no base URL"))"
    }

    // MARK: The cache

    /// Makes every resource not in use (no observers) eligible for deallocation, and deallocates those nobody else
    /// references; returns how many the cache stopped holding. Observers whose owners are gone are swept first.
    @discardableResult
    public func flushUnused() -> Int {
        for resource in resources.allInstances() { resource.observers.sweep() }
        let released = resources.flushUnused()
        logging.cache.debug("flushed unused resources", metadata: ["released": "\(released)"])
        return released
    }

    /// How many resources are alive and in the cache.
    public var cachedResourceCount: Int {
        resources.count
    }

    /// Wipes every live resource matching `pattern` (see ``Resource/wipe()``), then flushes unused resources.
    public func wipeResources(matching pattern: ConfigurationPattern = .all) {
        let compiled = pattern.compiled(base: base)
        for resource in resources.allInstances() {
            guard let url = resource.url else {
                if case .all = compiled { resource.wipe() }
                continue
            }
            if compiled.matches(url, withoutQuery: ResourceAddress.withoutQuery(url)) { resource.wipe() }
        }
        flushUnused()
    }

    /// A monitor that flushes this service's unused resources whenever `source` reports memory pressure. Run it in
    /// a task group or a `ServiceGroup` (its `run()` returns when cancelled).
    public func memoryPressureMonitor(source: any MemoryPressureSource) -> MemoryPressureMonitor {
        MemoryPressureMonitor(source: source) { [weak self] event in
            guard let self else { return }
            let released = flushUnused()
            logging.cache.info(
                "memory pressure: flushed unused resources",
                metadata: ["released": "\(released)", "source": "\(source.name)", "reason": "\(event.reason)"])
        }
    }
}
