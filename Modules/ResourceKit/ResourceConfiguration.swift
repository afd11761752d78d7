public import EntityCacheKit
public import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a resource loads and keeps its data. A ``Service`` makes one per resource and method by applying its
/// matching ``Service/configure(_:requestMethods:description:_:)`` rules, in order, to the defaults.
public struct ResourceConfiguration: Sendable {
    /// How long data stays up to date: ``Resource/loadIfNeeded()`` does not reload before. Default 30 seconds.
    public var expirationTime: Duration = .seconds(30)
    /// How long after an error ``Resource/loadIfNeeded()`` waits before trying again. Default 1 second.
    public var retryTime: Duration = .seconds(1)
    /// How long a request may take. Default 60 seconds.
    public var timeout: Duration = .seconds(60)
    /// Header fields added to every request.
    public var headers: HTTPHeaders = [:]
    /// The header fields that carry credentials (any case): redacted in logs and dropped on a redirect to another
    /// origin. Defaults to `HTTPHeaders.credentialFieldNames`; insert the names of your own, as in
    /// `resource.sensitiveHeaders.insert("X-Tenant-Secret")`.
    public var sensitiveHeaders: Set<String> = HTTPHeaders.credentialFieldNames
    /// Changes made to every request just before it is sent, in order.
    public var requestMutations: [@Sendable (inout TransportRequest) -> Void] = []
    /// What every request becomes before it starts, in order: each takes the resource and the request so far and
    /// returns the request the caller gets — usually a ``Request/chained(whenCompleted:)`` around it.
    public var requestDecorators: [@Sendable (Resource, Request) -> Request] = []
    /// The least time between two progress reports of a request (``Request/onProgress(_:)``, and observers'
    /// ``ResourceObserver/resourceRequestProgress(for:progress:)``). Default 50 ms, Siesta's.
    public var progressReportingInterval: Duration = .milliseconds(50)
    /// What a successful response's body becomes.
    public var pipeline = Pipeline()
    /// The header field that carries a mutation's idempotency key: one key per mutation, the same on every attempt
    /// of it (a transport's retries, ``Request/repeated()``), so that a server that saw it once can answer again
    /// without applying the change twice. Default `Idempotency-Key` (the IETF draft's name); nil sends none. A key
    /// the mutation's own `headers:` give is kept.
    public var idempotencyKeyHeader: String? = "Idempotency-Key"
    /// Where loaded data is kept across restarts; nil (the default) for nowhere. On first use a resource reads its
    /// entry and, on a hit, shows it as ``NewDataSource/cache`` data; each load writes the raw body back, a 304
    /// re-timestamps it, and a local override or a wipe removes it. The cache's key function can opt resources out.
    public var persistentCache: PersistentCache?

    /// Makes the defaults.
    public init() {}

    /// Adds a change made to every request just before it is sent (after ``headers`` are applied).
    public mutating func mutateRequests(_ mutation: @escaping @Sendable (inout TransportRequest) -> Void) {
        requestMutations.append(mutation)
    }

    /// Adds a decorator for every request — loads and ``Resource/request(_:body:contentType:headers:)`` alike:
    /// `decorator` gets the resource and the request, not started yet, and returns the request to use instead.
    /// The classic use is a token refresh: on a 401, refresh once and send the request again (the ResourceKit
    /// guide's "Chaining and decorating requests" shows one shared by every request).
    ///
    /// For a load, the decorated request's outcome is the load's: it updates the resource and its observers.
    /// ``Request/repeated()`` does not decorate again, so a repeated request that fails ends the chain.
    public mutating func decorateRequests(
        with decorator: @escaping @Sendable (_ resource: Resource, _ request: Request) -> Request
    ) {
        requestDecorators.append(decorator)
    }
}

/// One `configure` call: which resources and methods it is for, and what it does.
struct ConfigurationRule: Sendable {
    let pattern: CompiledPattern
    let methods: Set<HTTPMethod>?
    let description: String
    let configurer: @Sendable (inout ResourceConfiguration) -> Void

    func applies(to url: URL, withoutQuery: String, method: HTTPMethod) -> Bool {
        (methods?.contains(method) ?? true) && pattern.matches(url, withoutQuery: withoutQuery)
    }
}
