import TetherClock
import TetherConcurrency
import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A resource's mutable state, behind its lock.
struct ResourceState: Sendable {
    /// A configuration, and the service's configuration generation it was computed for. A class: most cached
    /// resources never compute one, and 128 bytes inline in every resource's state were a tenth of its cost.
    final class Cached: Sendable {
        let generation: UInt64
        let configuration: ResourceConfiguration

        init(generation: UInt64, configuration: ResourceConfiguration) {
            self.generation = generation
            self.configuration = configuration
        }
    }

    /// An error kept out of line: most resources never have one, and it is 136 bytes.
    final class ErrorBox: Sendable {
        let error: ResourceError

        init(_ error: ResourceError) {
            self.error = error
        }
    }

    /// What observers see: the confirmed data, with the optimistic layers of pending mutations over it.
    var latestData: Entity?
    /// The pending mutations' layers and the confirmed data beneath them; nil while no mutation with an optimistic
    /// update is pending (then ``latestData`` is the confirmed data).
    var optimistic: OptimisticLayers?
    /// ``latestData``'s timestamp on the time source's monotonic clock (``TimeSource/elapsed``), when it was set in
    /// this process; nil for data from the persistent cache, whose age only the wall clock can tell.
    var dataReceived: Duration?
    /// ``latestError``'s timestamp on the monotonic clock.
    var errorReceived: Duration?
    /// Counts every change of the confirmed data: a cache hit applies only if none happened while it was read.
    var dataChanges: UInt64 = 0
    /// The persistent-cache read and the load in flight: one state machine (see ``LoadState``).
    var loading = LoadState()
    var latestError: ResourceError? {
        get { errorBox?.error }
        set { errorBox = newValue.map(ErrorBox.init) }
    }
    private var errorBox: ErrorBox?
    var invalidated = false
    /// Counts invalidations (and wipes): a load whose count is older brings data that is stale at once.
    var invalidations: UInt64 = 0
    /// Every request in flight (loads, superseded loads, and `request(…)`s), oldest first, and whether it is a load.
    /// An array: a resource rarely has more than two in flight, and the order is what introspection shows.
    var requests: [(request: Request, isLoad: Bool)] = []

    /// What the server, the persistent cache or a local override last gave: ``latestData`` without the optimistic
    /// layers of pending mutations.
    var confirmedData: Entity? {
        if let optimistic { optimistic.confirmed } else { latestData }
    }

    /// The confirmed data's timestamp, read without copying the data (``isUpToDate(now:elapsed:configuration:)`` is
    /// on `loadIfNeeded()`'s fast path).
    var confirmedTimestamp: Date? {
        if let optimistic { optimistic.confirmed?.timestamp } else { latestData?.timestamp }
    }

    /// Replaces the confirmed data and posts `event` — unless optimistic layers lie over it: then the caller shows
    /// them with `Resource.showLayers(posting:)` outside the lock, which posts the event, and this returns it.
    mutating func confirm(_ entity: Entity?, posting event: ResourceEvent) -> ResourceEvent? {
        dataChanges &+= 1
        if let optimistic { self.optimistic = optimistic.confirming(entity) } else { latestData = entity }
        return show(posting: event)
    }

    /// Confirms `entity`, new from the network: the error cleared, the data timestamped on the monotonic clock, and
    /// the resource fresh unless `fresh` is false (a load that was invalidated while in flight). Returns what it
    /// replaced, for the caller to release outside the lock, and the event as ``confirm(_:posting:)`` does.
    mutating func confirmFromNetwork(_ entity: Entity, now: Date, elapsed: Duration, fresh: Bool) -> (
        released: (Entity?, ResourceError?), event: ResourceEvent?
    ) {
        let released = (confirmedData, latestError.take())
        dataReceived = Self.monotonic(entity.timestamp, now: now, elapsed: elapsed)
        if fresh { invalidated = false }
        return (released, confirm(entity, posting: .newData(.network)))
    }

    /// Takes away the layers `isRemoved` picks; returns whether it picked any. With none left, the confirmed data
    /// is what observers see.
    mutating func removeLayers(where isRemoved: (OptimisticLayers.Layer) -> Bool) -> Bool {
        guard let optimistic else { return false }
        let (remaining, removed) = optimistic.removing(where: isRemoved)
        if remaining == nil { latestData = optimistic.confirmed }
        self.optimistic = remaining
        return removed
    }

    /// After a change to the layers or the data beneath them: with no layer left, ``latestData`` is current, and
    /// `event` is posted now; otherwise `event` is returned, for `Resource.showLayers(posting:)`.
    mutating func show(posting event: ResourceEvent) -> ResourceEvent? {
        guard optimistic != nil else {
            post(event)
            return nil
        }
        return event
    }

    /// Forgets `request` once it has completed.
    mutating func removeRequest(_ request: Request) {
        if let index = requests.firstIndex(where: { $0.request === request }) { requests.remove(at: index) }
    }
    /// Events and load progress posted and not yet handed to the observer table, in order.
    var updates: [ResourceUpdate] = []
    /// Which thread hands events to the observer table (see `Drainer`).
    var eventDrainer = Drainer()
    /// The configuration for GET (loads), kept apart from other methods' for the `loadIfNeeded` fast path.
    var getConfiguration: Cached?
    var otherConfigurations: [HTTPMethod: Cached] = [:]

    /// Posts `event` for the observers (handed over by ``Resource/deliverEvents()``).
    mutating func post(_ event: ResourceEvent) {
        updates.append(.event(event))
    }

    func cachedConfiguration(for method: HTTPMethod, generation: UInt64) -> ResourceConfiguration? {
        let cached = method == .get ? getConfiguration : otherConfigurations[method]
        guard let cached, cached.generation == generation else { return nil }
        return cached.configuration
    }

    mutating func cache(_ configuration: ResourceConfiguration, for method: HTTPMethod, generation: UInt64) {
        let cached = Cached(generation: generation, configuration: configuration)
        if method == .get { getConfiguration = cached } else { otherConfigurations[method] = cached }
    }

    /// Siesta's rule: up to date unless invalidated, when the newer of the data and the error is no older than the
    /// expiration time (with no error) or the retry time (with one).
    ///
    /// Ages are measured on the monotonic clock for what arrived in this process, so a step of the wall clock
    /// changes nothing (a step back once kept 30-second data fresh for an hour, and stopped retries as long). For
    /// data from the persistent cache, only the wall clock can tell, and a timestamp from the future is stale.
    func isUpToDate(now: Date, elapsed: Duration, configuration: ResourceConfiguration) -> Bool {
        guard !invalidated else { return false }
        let data = confirmedTimestamp.map { Reading(wall: $0, monotonic: dataReceived) }
        let error = latestError.map { Reading(wall: $0.timestamp, monotonic: errorReceived) }
        let newest: Reading
        switch (data, error) {
        case (nil, nil): return false
        case (let only?, nil), (nil, let only?): newest = only
        case (let data?, let error?): newest = data.isOlder(than: error) ? error : data
        }
        let maxAge = error == nil ? configuration.expirationTime : configuration.retryTime
        if let received = newest.monotonic { return elapsed - received <= maxAge }
        let age = now.timeIntervalSince(newest.wall)
        return age >= 0 && age <= maxAge.timeInterval
    }

    /// When the data or the error arrived: on the wall clock, and on the monotonic clock when it arrived in this
    /// process. A value: ``isUpToDate(now:elapsed:configuration:)`` runs on every `loadIfNeeded()`, under the lock,
    /// and allocates nothing.
    private struct Reading {
        var wall: Date
        var monotonic: Duration?

        /// On the monotonic clock when both readings are on it, on the wall clock otherwise.
        func isOlder(than other: Reading) -> Bool {
            if let mine = monotonic, let theirs = other.monotonic { return mine < theirs }
            return wall < other.wall
        }
    }

    /// Where `timestamp`, read on the wall clock at `now`, falls on the monotonic clock at `elapsed`; nil for a
    /// timestamp from the future, which stays on the wall clock (and is stale there).
    static func monotonic(_ timestamp: Date, now: Date, elapsed: Duration) -> Duration? {
        let age = now.timeIntervalSince(timestamp)
        guard age >= 0 else { return nil }
        return elapsed - .nanoseconds(Int64((age * 1e9).rounded()))
    }
}
