public import MemoryPressureKit
public import TetherClock
import TetherConcurrency
public import TransportKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

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
///   `MemoryPressureMonitor` under memory pressure — see ``memoryPressureMonitor(source:)``), the cache's count
///   limit, or a wipe (``wipeResources(matching:)-(ConfigurationPattern)``). Until then they keep their data, ready
///   for the next lookup.
///
/// Keep the service for as long as you use its resources, as you would in Siesta. When the last reference to a
/// `Service` goes, it is freed at once — no flush needed — and with it every resource nobody else references,
/// observed or not; resources still referenced keep working (``Resource/service`` then makes a new face for them).
public final class Service: Sendable, CustomStringConvertible {
    let core: ServiceCore

    /// Makes a service.
    ///
    /// - Parameters:
    ///   - baseURL: The URL that ``resource(_:)`` paths are appended to. An invalid one (no scheme or host) is logged
    ///     and makes every ``resource(_:)`` an invalid resource whose loads fail saying so; with nil, only
    ///     ``resource(absoluteURL:)-(URL?)`` makes valid resources.
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
        core = ServiceCore(
            baseURL: baseURL, transport: transport, timeSource: timeSource,
            standardTransformers: standardTransformers, cacheCountLimit: cacheCountLimit, logging: logging)
        core.face.withLock { $0.service = self }
    }

    /// Makes a service whose base URL is `baseURL` (see the `String` form).
    public convenience init(
        baseURL: URL?, transport: any Transport, timeSource: any TimeSource = SystemTimeSource(),
        standardTransformers: StandardTransformers = .all, cacheCountLimit: Int = 2048,
        logging: ResourceLogging = ResourceLogging()
    ) {
        self.init(
            baseURL: baseURL?.absoluteString, transport: transport, timeSource: timeSource,
            standardTransformers: standardTransformers, cacheCountLimit: cacheCountLimit, logging: logging)
    }

    /// The face of an existing core (``Resource/service`` after the first face was dropped).
    init(core: ServiceCore) {
        self.core = core
    }

    deinit {
        core.faceReleased()
    }

    /// The base URL that ``resource(_:)`` paths are appended to, if it is valid.
    public var baseURL: URL? { core.baseURL }
    /// The transport that carries requests.
    public var transport: any Transport { core.transport }
    /// The clock that timestamps data and decides staleness.
    public var timeSource: any TimeSource { core.timeSource }
    /// The loggers.
    public var logging: ResourceLogging { core.logging }

    /// `Service(base URL)`.
    public var description: String {
        "Service(\(core.base ?? "no base URL"))"
    }

    // MARK: Resources

    /// The resource at `path` below the base URL: one instance per URL, from any thread.
    ///
    /// The path is always appended to the base URL, whether or not it begins with `/`: it never changes the host
    /// and never leaves the base path. Characters a path cannot hold are percent-encoded (so `?` and `#` stay in the
    /// path; use ``Resource/withParam(_:_:)`` for a query), and a `.` or `..` segment makes the resource invalid.
    /// An invalid resource is still a resource: its loads fail with a ``ResourceError`` saying what was wrong.
    ///
    /// ```swift
    /// service.resource("/items/42")   // https://api.example.com/v1/items/42
    /// service.resource("items/42")    // the same resource
    /// ```
    public func resource(_ path: String) -> Resource {
        core.resource(path)
    }

    /// The resource at `url`, which may be anywhere; nil or invalid gives an invalid resource (see ``resource(_:)``).
    public func resource(absoluteURL url: URL?) -> Resource {
        core.resource(absoluteURL: url)
    }

    /// The resource at the URL `urlString`; nil or not a URL gives an invalid resource (see ``resource(_:)``).
    public func resource(absoluteURL urlString: String?) -> Resource {
        core.resource(absoluteURL: urlString)
    }

    // MARK: Configuration

    /// Adds a configuration rule: `configurer` changes the configuration of every resource matching `pattern`, for
    /// requests with one of `requestMethods` (all methods when nil). Rules apply in the order they were added, after
    /// the defaults and the standard transformers; resources pick up the change at their next request.
    ///
    /// ```swift
    /// service.configure { $0.headers["Authorization"] = "Bearer \(token)" }
    /// service.configure("/items/**", requestMethods: [.get]) { $0.expirationTime = .seconds(300) }
    /// ```
    ///
    /// `configurer` runs when a resource first needs its configuration after a change, on that resource's calling
    /// thread: keep it to changing the configuration.
    public func configure(
        _ pattern: ConfigurationPattern = .all, requestMethods: [HTTPMethod]? = nil, description: String? = nil,
        _ configurer: @escaping @Sendable (inout ResourceConfiguration) -> Void
    ) {
        core.configure(pattern, requestMethods: requestMethods, description: description, configurer)
    }

    /// Adds a transformer from a closure at `stage` for resources matching `pattern`: the content must be an
    /// `Input`, the closure's result becomes the content. By default it replaces the stage's other transformers.
    ///
    /// ```swift
    /// service.configureTransformer("/greeting") { (text: String, _) in text.uppercased() }
    /// ```
    public func configureTransformer<Input: Sendable, Output: Sendable>(
        _ pattern: ConfigurationPattern = .all, requestMethods: [HTTPMethod]? = nil,
        atStage stage: PipelineStageKey = .model, replacingExisting: Bool = true, contentTypes: [String] = ["*/*"],
        description: String? = nil, _ transform: @escaping @Sendable (Input, Entity) throws -> Output?
    ) {
        core.configureTransformer(
            pattern, requestMethods: requestMethods, atStage: stage, replacingExisting: replacingExisting,
            contentTypes: contentTypes, description: description, transform)
    }

    /// Decodes the JSON bodies of resources matching `pattern` to `Model` at the model stage (see
    /// ``DecodableTransformer``), replacing the stage's other transformers.
    ///
    /// ```swift
    /// service.configureModel(User.self, for: "/users/*")
    /// let user = service.resource("/users/1").typedContent(as: User.self)
    /// ```
    public func configureModel<Model: Decodable & Sendable>(
        _ type: Model.Type, for pattern: ConfigurationPattern = .all, requestMethods: [HTTPMethod]? = nil,
        contentTypes: [String] = ["application/json", "*/*+json"],
        decoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }
    ) {
        core.configureModel(
            type, for: pattern, requestMethods: requestMethods, contentTypes: contentTypes, decoder: decoder)
    }

    /// Makes every resource recompute its configuration at its next request: call it when something a configurer
    /// reads has changed (a token, say).
    public func invalidateConfiguration() {
        core.invalidateConfiguration()
    }

    // MARK: The cache

    /// Makes every resource not in use (no observers) eligible for deallocation, and deallocates those nobody else
    /// references; returns how many the cache stopped holding. Observers whose owners are gone are swept first.
    @discardableResult
    public func flushUnused() -> Int {
        core.flushUnused()
    }

    /// How many resources are alive and in the cache.
    public var cachedResourceCount: Int {
        core.cachedResourceCount
    }

    /// How many resources the cache holds before creating one flushes unused ones (a soft limit: resources observed
    /// or referenced from outside stay). Settable at any time: lowered below ``cachedResourceCount``, the cache
    /// flushes at once; a non-positive value is treated as 1.
    public var cacheCountLimit: Int {
        get { core.cacheCountLimit }
        set { core.cacheCountLimit = newValue }
    }

    /// How many mutations may be pending at once, across the service's resources (at least 1; default 1,000): a
    /// mutation past it fails at once with ``ResourceError/Kind-swift.struct/tooManyPendingMutations``, sending
    /// nothing and showing nothing, so that a client that cannot reach its server holds bounded memory.
    public var maxPendingMutations: Int {
        get { core.mutations.withLock { $0.limit } }
        set { core.mutations.withLock { $0.limit = max(1, newValue) } }
    }

    /// How many mutations are pending: sent, or waiting to be, and not yet settled.
    public var pendingMutationCount: Int {
        core.mutations.withLock { $0.pending }
    }

    /// Wipes every live resource matching `pattern` (see ``Resource/wipe()``), then flushes unused resources.
    public func wipeResources(matching pattern: ConfigurationPattern = .all) {
        core.wipeResources(matching: pattern)
    }

    /// Wipes `resource` (see ``Resource/wipe()``), then flushes unused resources.
    public func wipeResources(matching resource: Resource) {
        core.wipeResources { $0 === resource }
    }

    /// Wipes every live resource for which `predicate` is true (see ``Resource/wipe()``), then flushes unused
    /// resources. `predicate` runs on the calling thread, once per live resource.
    public func wipeResources(where predicate: (Resource) -> Bool) {
        core.wipeResources(where: predicate)
    }

    /// Wipes every live resource whose URL begins with `prefix` (an absolute URL, or a path below the base URL
    /// when it begins with `/`), then flushes unused resources.
    public func wipeResources(withURLsStartingWith prefix: String) {
        let absolute = prefix.hasPrefix("/") ? (core.base ?? "") + prefix : prefix
        core.wipeResources { $0.url?.absoluteString.hasPrefix(absolute) == true }
    }

    /// Acts as a memory warning would — as ``memoryPressureMonitor(source:)`` does on a pressure event: flushes
    /// unused resources and logs it; returns how many the cache let go. One line for tests, and for apps on
    /// platforms that have no memory warning. (`MemoryPressureMonitor.simulate(_:reason:)` reaches every monitor in
    /// the process.)
    @discardableResult
    public func simulateMemoryWarning(reason: String = "simulated") -> Int {
        core.respond(to: MemoryPressureEvent(level: .warning, reason: reason), from: "simulated")
    }

    /// A monitor that flushes this service's unused resources whenever `source` reports memory pressure. Run it in
    /// a task group or a `ServiceGroup` (its `run()` returns when cancelled). It does not keep the service alive.
    public func memoryPressureMonitor(source: any MemoryPressureSource) -> MemoryPressureMonitor {
        core.memoryPressureMonitor(source: source)
    }
}
