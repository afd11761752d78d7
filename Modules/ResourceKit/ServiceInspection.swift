package import DeliveryKit
import MutationOutboxKit
package import OwnershipKit
import RegistryKit
import TetherClock
import TetherConcurrency
import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an inspector shows of a ``Service``: its resources, what each holds, who observes it, and what the next
/// memory-pressure flush would release. Taken on demand by ``Service/inspect()``; nothing is recorded for it
/// otherwise. Field names are stable: they are the inspector's JSON.
package struct ServiceInspection: Sendable, Hashable, Codable {
    /// The service's base URL.
    package var baseURL: String?
    /// How many resources the cache holds before creating one flushes unused ones.
    package var cacheCountLimit: Int
    /// Every live resource, by URL.
    package var resources: [ResourceInspection]
    /// The memory-pressure events it responded to, and what they released.
    package var memoryPressure: MemoryPressureInspection
    /// Its mutations: those pending in this process, and the durable ones the server refused.
    package var mutations: MutationsInspection
}

/// A service's mutations as an inspector shows them (from the latest ``MutationsSnapshot``).
package struct MutationsInspection: Sendable, Hashable, Codable {
    /// One mutation.
    package struct Mutation: Sendable, Hashable, Codable {
        /// Its idempotency key.
        package var key: String
        package var method: String
        package var url: String
        package var isDurable: Bool
        /// `waiting`, `sending`, `retrying after N failures`; for a refused one, why.
        package var state: String
        /// Seconds since it was made.
        package var ageSeconds: Double
    }

    /// Pending in this process, in the order they were made.
    package var pending: [Mutation]
    /// Refused for good, kept in the outbox's failed list.
    package var failed: [Mutation]
}

/// One resource as an inspector shows it.
package struct ResourceInspection: Sendable, Hashable, Codable {
    /// Its URL (or the text of an invalid one).
    package var url: String
    /// Whether an observer's owner is alive: it is never evicted.
    package var isObserved: Bool
    /// Whether something other than the service's cache references it (a variable in your code, a task): it
    /// survives a flush even unobserved.
    package var isReferencedElsewhere: Bool
    /// Whether the cache holds it strongly (false: flushed, alive only through outside references).
    package var isCached: Bool
    /// Whether the next memory-pressure flush would release it: unobserved and referenced by nothing else.
    package var wouldBeReleasedByFlush: Bool
    /// Its latest data, if any.
    package var data: DataInspection?
    /// Loads in flight (a superseded one included until it ends).
    package var loadsInFlight: Int
    /// The latest load's error, cleared by the next success.
    package var lastError: String?
    /// Its observers, in the order they were added.
    package var observers: [ResourceObserverInspection]
}

/// A resource's latest data.
package struct DataInspection: Sendable, Hashable, Codable {
    /// Its content type.
    package var contentType: String
    /// Its size in bytes, when known (the body as text or bytes, else `Content-Length`).
    package var bytes: Int?
    /// Seconds since it was received (or confirmed by a 304).
    package var ageSeconds: Double
    /// Its ETag, if the server sent one.
    package var etag: String?
    /// Whether ``Resource/loadIfNeeded()`` would do nothing now (not expired, not invalidated).
    package var isFresh: Bool
}

/// One observer of a resource.
package struct ResourceObserverInspection: Sendable, Hashable, Codable {
    /// Its id among the resource's observers, in the order they were added (stable while it lives).
    package var id: UInt64
    /// How it was added: `self-owned` (`addObserver(self)`), `owned` (`addObserver(_:owner:)`) or `closure`
    /// (`addObserver(owner:) { … }`).
    package var flavour: String
    /// The observer's type name (`closure` for a closure).
    package var observerType: String
    /// Its owners: type names, and whether each is alive.
    package var owners: [ObserverInspection.Owner]
    /// Whether it observes now.
    package var isObserving: Bool
    /// How events reach it: `direct` (called in the notifier's context, no policy) or the delivery policy's type
    /// name — `ExecutorDeliveryPolicy` for `.deliverOn(…)`, `ImmediateDeliveryPolicy` for `.immediate`.
    package var policy: String
    /// With a delivery policy, its lane's counts: events delivered, coalesced while it was busy, the most held.
    package var delivery: DeliveryStatistics?
}

extension Service {
    /// The service's resources as an inspector shows them, sorted by URL (see ``ServiceInspection``).
    package func inspect() -> ServiceInspection {
        let now = core.timeSource.now
        let resources = core.resources.inspect().map { entry in
            entry.value.inspect(now: now, holding: entry)
        }
        return ServiceInspection(
            baseURL: baseURL?.absoluteString, cacheCountLimit: cacheCountLimit,
            resources: resources.sorted { $0.url < $1.url },
            memoryPressure: core.pressure.withLock { $0.inspection(now: now) },
            mutations: Self.inspect(core.tracker.latest.snapshot, now: now))
    }

    static func inspect(_ snapshot: MutationsSnapshot, now: Date) -> MutationsInspection {
        MutationsInspection(
            pending: snapshot.pending.map { mutation in
                let state =
                    switch mutation.phase {
                    case .waiting: "waiting"
                    case .sending: "sending"
                    case .retrying(let failures): "retrying after \(failures) failure\(failures == 1 ? "" : "s")"
                    }
                return .init(
                    key: mutation.id, method: mutation.method.rawValue, url: mutation.url,
                    isDurable: mutation.isDurable, state: state,
                    ageSeconds: max(0, now.timeIntervalSince(mutation.began)))
            },
            failed: snapshot.failed.map { entry in
                .init(
                    key: entry.key, method: entry.method, url: entry.url, isDurable: true,
                    state: entry.failure ?? "refused", ageSeconds: max(0, now.timeIntervalSince(entry.enqueued)))
            })
    }
}

extension Resource {
    func inspect(now: Date, holding: Registry<String, Resource>.Inspection) -> ResourceInspection {
        let isFresh = isUpToDate
        let (data, error, loads) = state.withLock { state in
            (state.latestData, state.latestError, state.requests.count { $0.isLoad })
        }
        let observers = (observersIfAny?.inspect { $0.inspection } ?? []).map { observer, sink in
            ResourceObserverInspection(
                id: observer.id,
                flavour: sink?.isClosure == true ? "closure" : observer.isSelfOwned ? "self-owned" : "owned",
                observerType: sink?.isClosure == true ? "closure" : observer.observerType,
                owners: observer.owners, isObserving: observer.isObserving, policy: sink?.policy ?? "direct",
                delivery: sink?.lane ?? nil)
        }
        return ResourceInspection(
            url: urlString, isObserved: holding.isInUse, isReferencedElsewhere: holding.isReferencedElsewhere,
            isCached: holding.isHeldStrongly, wouldBeReleasedByFlush: holding.wouldBeReleasedByFlush,
            data: data.map { data in
                DataInspection(
                    contentType: data.contentType, bytes: Self.size(of: data),
                    ageSeconds: max(0, now.timeIntervalSince(data.timestamp)), etag: data.etag, isFresh: isFresh)
            },
            loadsInFlight: loads, lastError: error.map { "\($0)" }, observers: observers)
    }

    static func size(of data: Entity) -> Int? {
        switch data.content {
        case let bytes as Data: bytes.count
        case let text as String: text.utf8.count
        default: data.header("Content-Length").flatMap { Int($0) }
        }
    }
}

extension ObserverSink {
    /// What an inspector shows of the sink: whether it is a closure, its delivery policy, and its lane's counts.
    var inspection: (isClosure: Bool, policy: String, lane: DeliveryStatistics?) {
        switch target {
        case .closure: (true, "direct", nil)
        case .lane(let lane, let observed, let policy):
            (observed == ClosureObserver.self, String(describing: policy), lane.statistics)
        case .direct(let observer): (type(of: observer) == ClosureObserver.self, "direct", nil)
        case .none: (false, "direct", nil)
        }
    }
}
