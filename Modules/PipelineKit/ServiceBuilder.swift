import EntityCacheKit
import Foundation
import Logging
import MutationOutboxKit
import ResourceKit
import TransportKit

/// Makes one `Service` from its configuration: the transport wrapped for retries, the service-wide settings, then
/// each resource rule in order.
struct ServiceBuilder {
    let name: String
    let configuration: ServiceConfiguration
    let baseURL: String?
    let transport: any Transport
    /// The stages of each rule, made.
    let stages: [[ResponseStage]]
    let cache: PersistentCache?
    /// The persistence's outbox, for durable mutations.
    let outbox: (any MutationOutbox)?
    let countLimit: Int
    let defaults: AssembledPipeline.Defaults

    func build() -> ResourceKit.Service {
        let policy = configuration.retry.policy
        var logger = defaults.logger
        logger[metadataKey: "service"] = "\(name)"
        let carried: any Transport =
            policy.maxAttempts > 1
            ? RetryingTransport(transport, policy: policy, timeSource: defaults.timeSource, logger: logger) : transport
        let service = ResourceKit.Service(
            baseURL: baseURL, transport: carried, timeSource: defaults.timeSource,
            standardTransformers: configuration.standardStages ? .all : [], cacheCountLimit: countLimit)
        let mutations = configuration.mutations
        service.maxPendingMutations = mutations.maxPending
        service.mutationConfiguration.outbox = outbox
        service.mutationConfiguration.isDurable = mutations.durable
        service.mutationConfiguration.order = mutations.orderedPerService ? .perService : .perResource
        service.mutationConfiguration.retryBackoff = mutations.retryBackoff
        service.mutationConfiguration.maxRetryBackoff = mutations.maxRetryBackoff
        let serviceCache = configuration.cache.enabled ? cache.map { keyed($0) } : nil
        let settings = configuration
        service.configure(description: "services.\(name)") { resource in
            resource.expirationTime = settings.expiry
            resource.retryTime = settings.retryAfter
            resource.timeout = settings.requestTimeout
            for (field, value) in settings.headers.sorted(by: { $0.key < $1.key }) { resource.headers[field] = value }
            resource.sensitiveHeaders.formUnion(settings.sensitiveHeaders.map { $0.lowercased() })
            resource.persistentCache = serviceCache
            resource.idempotencyKeyHeader = settings.mutations.idempotencyHeader
        }
        for (index, rule) in configuration.resources.enumerated() {
            let ruleStages = stages[index]
            service.configure(
                rule.configurationPattern, requestMethods: rule.methods,
                description: "services.\(name).resources[\(index)] (\(rule.matchDescription))"
            ) { resource in
                if let expiry = rule.expiry { resource.expirationTime = expiry }
                if let retryAfter = rule.retryAfter { resource.retryTime = retryAfter }
                if let timeout = rule.timeout { resource.timeout = timeout }
                for (field, value) in rule.headers.sorted(by: { $0.key < $1.key }) { resource.headers[field] = value }
                if let usesCache = rule.cache { resource.persistentCache = usesCache ? serviceCache : nil }
                for stage in ruleStages { stage.apply(to: &resource) }
            }
        }
        return service
    }

    /// The cache, with entries named as configured.
    private func keyed(_ cache: PersistentCache) -> PersistentCache {
        switch configuration.cache.key {
        case .url:
            return cache
        case .relative:
            let base = baseURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? ""
            return PersistentCache(cache.storage, logger: defaults.logger) { url in
                let text = url.absoluteString
                return !base.isEmpty && text.hasPrefix(base) ? "relative:" + text.dropFirst(base.count) : text
            }
        }
    }
}
