import EntityCacheKit
import Logging
import MutationOutboxKit
import PersistenceKit
import Synchronization
import TetherClock
import TetherConcurrency
public import TransportKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Mutations: requests that change the resource on the server, shown to its observers at once and rolled back
/// cleanly when they fail — TanStack Query's `useMutation` and Apollo's optimistic layers, on Siesta's resources.
extension Resource {
    /// Sends a request that changes this resource — `method` and `body`, configured for `method` like
    /// ``request(_:body:contentType:headers:)`` — and keeps the resource's state in step with it:
    ///
    /// - **At once**, before this returns, observers see the content `optimistic` expects
    ///   (``ResourceEvent/newData(_:)`` with ``NewDataSource/optimistic``).
    /// - **On success**, what `onSuccess` says: the resource reloads (the default), or the response becomes its data.
    ///   Either way the optimistic layer gives way to the server's data in one step, and every resource matching
    ///   `invalidates` is invalidated, and reloaded if it has observers.
    /// - **On failure or cancellation**, the layer is taken away (``NewDataSource/rollback``): observers see the
    ///   content as if the mutation had never been applied — over the newest confirmed data, with the layers of
    ///   other pending mutations still on top.
    ///
    /// Every attempt carries the mutation's idempotency key (``ResourceConfiguration/idempotencyKeyHeader``), and a
    /// `RetryingTransport` retries a request that carries one whatever its method.
    ///
    /// ```swift
    /// item.mutate(.put, json: edited, optimistic: .replacing(with: edited), onSuccess: .useResponse)
    ///     .onFailure { error in show(error) }
    /// ```
    ///
    /// The returned request completes after the resource's state and observers are updated; cancelling it rolls
    /// the mutation back (the server may still have applied it). ``wipe()`` cancels it and drops its layer. Its
    /// ``Request/repeated()`` sends the same request again, idempotency key included, and leaves the resource alone.
    @discardableResult
    public func mutate(
        _ method: HTTPMethod, body: Data? = nil, contentType: String? = nil, headers: HTTPHeaders = [:],
        optimistic: OptimisticUpdate? = nil, onSuccess: MutationSuccess = .reload,
        invalidates: [ConfigurationPattern] = [], durable: Bool? = nil
    ) -> Request {
        // Nothing could be sent: nothing is shown, counted or stored.
        guard url != nil else { return failedRequest(method, invalidURLError(method: method)) }
        guard core.beginMutation() != nil else {
            let limit = core.mutations.withLock { $0.limit }
            return failedRequest(
                method,
                ResourceError(
                    .tooManyPendingMutations,
                    message: "\(limit) mutations are pending, the service's limit (maxPendingMutations): not sent",
                    method: method, url: urlString, timestamp: core.timeSource.now))
        }
        let configuration = configuration(for: method)
        var headers = headers
        if let contentType { headers["Content-Type"] = contentType }
        let keyHeader = configuration.idempotencyKeyHeader
        let key = keyHeader.flatMap { headers[$0] } ?? UUID().uuidString
        if let keyHeader, headers[keyHeader] == nil { headers[keyHeader] = key }
        let notQueued = { [self] (message: String, cause: PersistenceError?) -> Request in
            core.endMutation()
            return failedRequest(
                method,
                ResourceError(
                    .mutationNotQueued, message: message, method: method, url: urlString,
                    timestamp: core.timeSource.now, cause: cause))
        }
        let apply: OptimisticUpdate.Apply?
        do {
            apply = try optimistic?.resolved(body: body, definitions: core.durable)
        } catch {
            return notQueued(error.message + ": nothing was sent, and nothing shown", nil)
        }
        let plan = MutationPlan(
            key: key, method: method, body: body, headers: headers, apply: apply, onSuccess: onSuccess,
            invalidates: invalidates)
        guard durable ?? core.durable.configuration.isDurable else {
            return startMutation(plan, configuration: configuration, entry: nil)
        }
        if let optimistic, optimistic.storedName == nil {
            return notQueued(
                "a durable mutation's optimistic update must survive a restart, and a function cannot: use "
                    + ".named(…) or .removing; nothing was sent, and nothing shown", nil)
        }
        let invalidated = invalidates.compactMap(\.stored)
        guard invalidated.count == invalidates.count else {
            return notQueued(
                "a durable mutation's invalidates: must survive a restart, and a predicate cannot: use globs or "
                    + "regular expressions; nothing was sent, and nothing shown", nil)
        }
        let entry = OutboxEntry(
            key: key, lane: core.durable.configuration.order == .perService ? "" : urlString,
            method: method.rawValue, url: urlString,
            headers: headers.map { OutboxEntry.Header(name: $0.name, value: $0.value) }, body: body,
            optimisticUpdate: optimistic?.storedName, usesResponse: onSuccess == .useResponse,
            invalidates: invalidated, enqueued: core.timeSource.now)
        switch core.durable.enqueue(entry) {
        case .success(let written):
            return startMutation(plan, configuration: configuration, entry: written)
        case .failure(let error):
            return notQueued(
                "the durable mutation could not be written to the outbox (\(error.message)): nothing was sent, and "
                    + "nothing shown", error)
        }
    }

    /// What a mutation sends and does, however it began: made now, or resumed from the outbox.
    struct MutationPlan: Sendable {
        /// Its idempotency key, or a key of its own when none is sent: its name in the outbox and in snapshots.
        let key: String
        let method: HTTPMethod
        let body: Data?
        /// The call's own header fields: the idempotency key and the content type among them.
        let headers: HTTPHeaders
        let apply: OptimisticUpdate.Apply?
        let onSuccess: MutationSuccess
        let invalidates: [ConfigurationPattern]
    }

    /// Shows the plan's layer, starts its request and returns it; `entry` is its outbox entry when it is durable.
    /// The caller has counted it as pending.
    func startMutation(
        _ plan: MutationPlan, configuration: ResourceConfiguration, entry: OutboxEntry?
    ) -> Request {
        let id = Self.mutationNumbers.add(1, ordering: .relaxed).newValue
        let (method, body, headers) = (plan.method, plan.body, plan.headers)
        // A durable mutation takes its turn in its lane: the last of the lane, after the one before it.
        let durable = entry.map { entry in
            let lane = core.durable.configuration.order == .perService ? "" : urlString
            let (turn, previous) = core.durable.enterLane(lane)
            return (entry: entry, lane: lane, turn: turn, previous: previous)
        }
        // The raw answer, kept for the persistent cache when it becomes the resource's data.
        let capture =
            plan.onSuccess == .useResponse && cacheSlot != nil && configuration.requestDecorators.isEmpty
            ? LockedValue<CachedEntity?>(nil) : nil
        let mutation = Request(
            method: method, url: urlString, timeSource: core.timeSource,
            resolve: { [self] mutation, outcome in
                settleMutation(
                    mutation, id, outcome, plan: plan, entry: durable.map { ($0.entry, $0.lane, $0.turn) },
                    raw: capture?.withLock { $0.take() })
            },
            // Repeated, it sends the same request, key included; the resource's state is left alone.
            replay: { [self] in makeRequest(method, body: body, contentType: nil, headers: headers) },
            progressInterval: configuration.progressReportingInterval)
        // Undecorated, the mutation makes the exchange itself; decorated, it follows the request the decorators make.
        var work: Request.Work
        if configuration.requestDecorators.isEmpty {
            work =
                exchangeWork(
                    method, body: body, contentType: nil, headers: headers, configuration: configuration,
                    capture: capture) ?? { [self] _ in .failure(invalidURLError(method: method)) }
        } else {
            work = { [self] mutation in
                let sent = decorated(makeRequest(method, body: body, contentType: nil, headers: headers))
                return await Request.follow(sent, for: mutation)
            }
        }
        if let durable {
            work = durableWork(work, id: id, key: plan.key, turn: durable.turn, waited: durable.previous != nil)
        }
        core.tracker.began(
            MutationsSnapshot.Mutation(
                id: plan.key, method: method, url: urlString, isDurable: entry != nil, began: core.timeSource.now,
                phase: durable?.previous == nil ? .sending : .waiting))
        let layer = plan.apply.map { OptimisticLayers.Layer(id: id, apply: $0, began: core.timeSource.now) }
        // Listed and layered in one step: a wipe takes both or neither.
        state.withLock { state in
            state.requests.append((mutation, false))
            guard let layer else { return }
            state.optimistic = (state.optimistic ?? OptimisticLayers(confirmed: state.latestData, layers: []))
                .adding(layer)
        }
        if layer != nil {
            showLayers(posting: .newData(.optimistic))
            core.logging.stateChanges.debug(
                "optimistic update", metadata: ["url": "\(urlString)", "mutation": "\(id)"])
            deliverEvents()
        }
        if let durable, let previous = durable.previous {
            // Started when the turn before is over: until then it holds no task.
            mutation.prepare(work)
            previous.whenOver { [turn = durable.turn] in
                if turn.previousEnded() { mutation.start() }
            }
        } else {
            mutation.start(work)
        }
        return mutation
    }

    /// Sends `json` encoded by `encoder` as an `application/json` body (see
    /// ``mutate(_:body:contentType:headers:optimistic:onSuccess:invalidates:durable:)``). A value that does not encode fails
    /// the mutation at once: nothing is sent, and no optimistic update is shown.
    @discardableResult
    public func mutate<Body: Encodable>(
        _ method: HTTPMethod, json: Body, encoder: JSONEncoder = JSONEncoder(), headers: HTTPHeaders = [:],
        optimistic: OptimisticUpdate? = nil, onSuccess: MutationSuccess = .reload,
        invalidates: [ConfigurationPattern] = [], durable: Bool? = nil
    ) -> Request {
        switch encodeJSON(json, encoder: encoder, method: method) {
        case .success(let body):
            return mutate(
                method, body: body, contentType: "application/json", headers: headers, optimistic: optimistic,
                onSuccess: onSuccess, invalidates: invalidates, durable: durable)
        case .failure(let error):
            return failedRequest(method, error)
        }
    }

    /// Sends `text` as a `text/plain; charset=utf-8` body (see
    /// ``mutate(_:body:contentType:headers:optimistic:onSuccess:invalidates:durable:)``).
    @discardableResult
    public func mutate(
        _ method: HTTPMethod, text: String, headers: HTTPHeaders = [:], optimistic: OptimisticUpdate? = nil,
        onSuccess: MutationSuccess = .reload, invalidates: [ConfigurationPattern] = [], durable: Bool? = nil
    ) -> Request {
        mutate(
            method, body: Data(text.utf8), contentType: "text/plain; charset=utf-8", headers: headers,
            optimistic: optimistic, onSuccess: onSuccess, invalidates: invalidates, durable: durable)
    }

    /// Numbers mutations, for their layers and the log.
    private static let mutationNumbers = Atomic<UInt64>(0)

    /// Applies a mutation's outcome to the state, before the request's callbacks run: on success the layer gives way
    /// to the response or to a reload, on failure it is taken away.
    private func settleMutation(
        _ mutation: Request, _ id: UInt64, _ outcome: RequestOutcome, plan: MutationPlan,
        entry: (entry: OutboxEntry, lane: String, turn: LaneTurn)?, raw: CachedEntity?
    ) -> RequestOutcome {
        let (onSuccess, invalidates) = (plan.onSuccess, plan.invalidates)
        core.endMutation()
        var refused: OutboxEntry?
        if let (entry, lane, turn) = entry {
            let failure = outcome.error.flatMap { $0.isCancellation ? nil : $0.message }
            core.durable.settle(
                entry, lane: lane, turn: turn, failure: failure, cancelled: outcome.error?.isCancellation == true)
            if let failure {
                refused = entry
                refused?.failure = failure
                // Kept in the failed list for the application: a warning, with the key the server saw.
                core.logging.stateChanges.warning(
                    "durable mutation refused: rolled back, kept in the outbox's failed list",
                    metadata: ["url": "\(urlString)", "key": "\(entry.key)", "error": "\(failure)"])
            }
        }
        core.tracker.settled(plan.key, refused: refused)
        let (now, elapsed) = (core.timeSource.now, core.timeSource.elapsed)
        let response = outcome.entity.flatMap { onSuccess == .useResponse && !$0.hasNoBody ? $0 : nil }
        var released: (Entity?, ResourceError?) = (nil, nil)
        var hasLayer = false
        let event = state.withLock { state -> ResourceEvent? in
            state.removeRequest(mutation)
            hasLayer = state.optimistic?.layers.contains { $0.id == id } ?? false
            if outcome.error != nil {
                guard state.removeLayers(where: { $0.id == id }) else { return nil }
                return state.show(posting: .newData(.rollback))
            }
            if let response {
                _ = state.removeLayers { $0.id == id }
                // A load in flight would bring data older than this answer: its outcome will not touch the resource.
                state.loading.endLoad()
                state.invalidations &+= 1
                let (replaced, event) = state.confirmFromNetwork(response, now: now, elapsed: elapsed, fresh: true)
                released = replaced
                return event
            }
            // Stale now; the layer stays until a load begun from now on brings data.
            state.invalidated = true
            state.invalidations &+= 1
            if let optimistic = state.optimistic, hasLayer {
                state.optimistic = optimistic.removingWithLoad(id, from: state.invalidations)
            }
            return nil
        }
        withExtendedLifetime(released) {}  // the replaced data is released here, outside the lock
        if let event { showLayers(posting: event) }
        // The persistent cache keeps what the resource now shows beneath its layers: the answer, as a load's would be
        // kept (or nothing, when its raw form was not captured: a decorated request's).
        if let response {
            if let raw { writeBack(.newData(response), raw: raw, at: now) } else { removeCacheEntry() }
        }
        deliverEvents()
        logMutation(id, outcome, applied: response != nil)
        // The reload starts at once when there is a layer to replace or an observer to show it, and otherwise when
        // the resource is next needed.
        if outcome.error == nil, response == nil, hasLayer || hasObservers { load() }
        if outcome.error == nil { core.invalidate(matching: invalidates, besides: self) }
        return outcome
    }

    private func logMutation(_ id: UInt64, _ outcome: RequestOutcome, applied: Bool) {
        let metadata: Logger.Metadata = ["url": "\(urlString)", "mutation": "\(id)"]
        if let error = outcome.error {
            // The caller has the error, and the observers the rollback: debug, not warning.
            core.logging.stateChanges.debug(
                "mutation failed: rolled back", metadata: metadata.merging(["error": "\(error.message)"]) { $1 })
        } else {
            core.logging.stateChanges.debug(
                applied ? "mutation succeeded: response applied" : "mutation succeeded: stale", metadata: metadata)
        }
    }

    /// Shows the optimistic layers over the confirmed data, computing them outside the lock, and posts `event`
    /// with the result — and, in the same step, forgets `finishing`, the request whose outcome this shows. Layers
    /// that changed meanwhile are computed again: what is shown is always the layers as they are now. With no layers
    /// left, the confirmed data is already shown, and only the event is posted.
    func showLayers(posting event: ResourceEvent, finishing request: Request? = nil) {
        while true {
            guard let layers = state.withLock({ $0.optimistic }) else {
                state.withLock { state in
                    state.post(event)
                    if let request { state.removeRequest(request) }
                }
                return
            }
            let visible = layers.visible()
            let (shown, replaced) = state.withLock { state -> (Bool, Entity?) in
                guard state.optimistic === layers else { return (false, nil) }
                let replaced = state.latestData
                state.latestData = visible
                state.post(event)
                if let request { state.removeRequest(request) }
                return (true, replaced)
            }
            withExtendedLifetime(replaced) {}  // released here, outside the lock
            if shown { return }
        }
    }
}

extension Entity {
    /// Whether the entity is a response without a body (`204 No Content`): empty `Data`, which no transformer
    /// took.
    var hasNoBody: Bool {
        (content as? Data)?.isEmpty == true
    }
}
