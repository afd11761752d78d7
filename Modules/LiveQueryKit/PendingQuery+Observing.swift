public import DeliveryKit
public import Dispatch
import OwnershipKit

/// The four Ditto variants, the owner-tied ones, and an `AsyncSequence` — all built on the next-signal form.
///
/// | | the handler is called again after it | on |
/// |---|---|---|
/// | ``observeLocal(onError:handler:)`` | returns | a serial queue of the query's own |
/// | ``observeLocal(deliverOn:onError:handler:)`` | returns | `queue` |
/// | ``observeLocalWithNextSignal(onError:handler:)`` | calls `signalNext` | a serial queue of the query's own |
/// | ``observeLocalWithNextSignal(deliverOn:onError:handler:)`` | calls `signalNext` | `queue` |
/// | ``observeLocalAsync(owner:onError:handler:)`` | returns (an `async` handler) | the handler's own isolation (`@MainActor`, an actor) |
///
/// `deliverOn:` takes a `DispatchQueue`, as Ditto's does, or any DeliveryKit executor (`.serialQueue()`, `.inline`,
/// your own `DeliveryExecutor`).
///
/// Until then the store goes on committing, and nothing queues up: the next call gets the latest result, only if it
/// differs from the last one this handler received, with the difference from that one. The defaults never use the
/// main queue, so they work in a process that does not drain it (a Linux service, a test).
///
/// **Failures reach the observer** (GRDB's `onError:` is the model). When the query cannot be evaluated — an I/O
/// error, a store that was closed — `onError` is called in the handler's place, on the same queue and under the
/// same back pressure; the observer keeps the last good result it received. The query is run again at the next
/// commit that touches its collection, and the next handler call means results have resumed (its event is the
/// difference from the last good result).
extension PendingQuery {
    /// Called when the query cannot be evaluated; the observation goes on, and is retried at the next commit.
    public typealias ErrorHandler = @Sendable (any Error) -> Void

    /// Observes the query: `handler` gets the result at once (``LiveQueryEvent/initial``), then after each change
    /// that alters it, once it has returned from the previous call. The observation lasts as long as the handle.
    ///
    /// - Throws: ``QueryError`` or `PersistenceError` for an invalid query, before anything is observed.
    public func observeLocal(
        onError: ErrorHandler? = nil, handler: @escaping @Sendable ([Document], LiveQueryEvent) -> Void
    ) throws -> LiveQuery {
        try observeLocalWithNextSignal(onError: onError) { documents, event, signalNext in
            handler(documents, event)
            signalNext()
        }
    }

    /// ``observeLocal(onError:handler:)``, calling `handler` on `queue`.
    public func observeLocal(
        deliverOn queue: DispatchQueue, onError: ErrorHandler? = nil,
        handler: @escaping @Sendable ([Document], LiveQueryEvent) -> Void
    ) throws -> LiveQuery {
        try observeLocalWithNextSignal(deliverOn: queue, onError: onError) { documents, event, signalNext in
            handler(documents, event)
            signalNext()
        }
    }

    /// ``observeLocal(onError:handler:)``, calling `handler` through `executor`.
    public func observeLocal(
        deliverOn executor: some DeliveryExecutor, onError: ErrorHandler? = nil,
        handler: @escaping @Sendable ([Document], LiveQueryEvent) -> Void
    ) throws -> LiveQuery {
        try observeLocalWithNextSignal(deliverOn: executor, onError: onError) { documents, event, signalNext in
            handler(documents, event)
            signalNext()
        }
    }

    /// Observes the query with back pressure: after a call, `handler` is not called again until it calls
    /// `signalNext` — from any thread, at any time, for example after asynchronous work on the documents.
    public func observeLocalWithNextSignal(
        onError: ErrorHandler? = nil, handler: @escaping @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void
    ) throws -> LiveQuery {
        try observe(on: .serialQueue(label: "tether.livequery"), owner: nil, onError: onError, handler: handler)
    }

    /// ``observeLocalWithNextSignal(onError:handler:)``, calling `handler` on `queue`. The general form: every other
    /// variant is this one.
    public func observeLocalWithNextSignal(
        deliverOn queue: DispatchQueue, onError: ErrorHandler? = nil,
        handler: @escaping @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void
    ) throws -> LiveQuery {
        try observe(on: .queue(queue), owner: nil, onError: onError, handler: handler)
    }

    /// ``observeLocalWithNextSignal(onError:handler:)``, calling `handler` through `executor`.
    public func observeLocalWithNextSignal(
        deliverOn executor: some DeliveryExecutor, onError: ErrorHandler? = nil,
        handler: @escaping @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void
    ) throws -> LiveQuery {
        try observe(on: executor, owner: nil, onError: onError, handler: handler)
    }

    /// Observes the query with an `async` handler, run on its own isolation — a `@MainActor` closure runs on the
    /// main actor, with no hop written by hand — and called again only after it has returned: the same back
    /// pressure, the latest result, only if it changed. Ends with the handle, or with `owner` when one is given
    /// (then the handle need not be kept).
    ///
    /// ```swift
    /// let liveQuery = try items.find("store_id == 'abc123'").observeLocalAsync { @MainActor documents, _ in
    ///     model.rows = documents
    /// }
    /// ```
    ///
    /// The owner check is made on the handler's isolation, just before the call: an owner that died, or a query
    /// stopped while the call waited for its actor, gets no call. Stop from that actor with `await stop()`.
    @discardableResult
    public func observeLocalAsync(
        owner: AnyObject? = nil, onError: ErrorHandler? = nil,
        handler: @escaping @isolated(any) @Sendable ([Document], LiveQueryEvent) async -> Void
    ) throws -> LiveQuery {
        try observe(owner: owner, kind: .async) { engine, binding, delivered in
            DeliveryLane<Snapshot>.isolated(skipIf: delivered.isUnchanged) { [weak engine] delivery in
                guard let engine, let id = binding.id else { return }
                await Self.call(id, observers: engine.observers, isolation: handler.isolation) {
                    switch delivery.payload {
                    case .documents(let documents, let commit, _):
                        await handler(documents, delivered.event(for: documents, commit: commit))
                    case .failure(let failure):
                        onError?(failure.error)
                    }
                }
            }
        }
    }

    /// Runs `body` on `isolation` — the handler's actor — if observer `id` is still live once there: the check is
    /// made where the call is, not before the hop.
    private static func call(
        _ id: ObserverID, observers: ObserverTable<Registration, Never>, isolation: isolated (any Actor)?,
        _ body: () async -> Void
    ) async {
        await observers.withLiveObserver(id, body)
    }

    // MARK: Owner-tied (Siesta's ownership, applied to live queries)

    /// ``observeLocal(onError:handler:)`` for as long as `owner` lives: the observation ends when it is deallocated,
    /// so the returned handle need not be kept. No call is made once the owner's `deinit` has begun — not even for a
    /// result that was already waiting — and a call in progress keeps the owner alive until it returns.
    ///
    /// Capture the owner weakly: a closure that captures it strongly keeps it alive for as long as the observation
    /// lasts, which is forever, since the observation lasts as long as the owner.
    ///
    /// ```swift
    /// try items.find("store_id == 'abc123'").observeLocal(owner: self) { [weak self] documents, _ in
    ///     self?.show(documents)
    /// }
    /// ```
    @discardableResult
    public func observeLocal(
        owner: AnyObject, deliverOn queue: DispatchQueue? = nil, onError: ErrorHandler? = nil,
        handler: @escaping @Sendable ([Document], LiveQueryEvent) -> Void
    ) throws -> LiveQuery {
        try observeLocalWithNextSignal(owner: owner, deliverOn: queue, onError: onError) {
            documents, event, signalNext in
            handler(documents, event)
            signalNext()
        }
    }

    /// ``observeLocalWithNextSignal(onError:handler:)`` for as long as `owner` lives (see
    /// `observeLocal(owner:deliverOn:onError:handler:)`). A result waiting for `signalNext` when the owner dies is
    /// dropped: signalling then calls nothing.
    @discardableResult
    public func observeLocalWithNextSignal(
        owner: AnyObject, deliverOn queue: DispatchQueue? = nil, onError: ErrorHandler? = nil,
        handler: @escaping @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void
    ) throws -> LiveQuery {
        try observe(
            on: queue.map { .queue($0) } ?? .serialQueue(label: "tether.livequery"), owner: owner, onError: onError,
            handler: handler)
    }

    /// `observeLocal(owner:deliverOn:onError:handler:)`, calling `handler` through `executor`.
    @discardableResult
    public func observeLocal(
        owner: AnyObject, deliverOn executor: some DeliveryExecutor, onError: ErrorHandler? = nil,
        handler: @escaping @Sendable ([Document], LiveQueryEvent) -> Void
    ) throws -> LiveQuery {
        try observeLocalWithNextSignal(owner: owner, deliverOn: executor, onError: onError) {
            documents, event, signalNext in
            handler(documents, event)
            signalNext()
        }
    }

    /// ``observeLocalWithNextSignal(owner:deliverOn:onError:handler:)``, calling `handler` through `executor`.
    @discardableResult
    public func observeLocalWithNextSignal(
        owner: AnyObject, deliverOn executor: some DeliveryExecutor, onError: ErrorHandler? = nil,
        handler: @escaping @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void
    ) throws -> LiveQuery {
        try observe(on: executor, owner: owner, onError: onError, handler: handler)
    }

    // MARK: The mechanism

    func observe(
        on executor: any DeliveryExecutor, owner: AnyObject?, onError: ErrorHandler?,
        handler: @escaping @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void
    ) throws -> LiveQuery {
        try observe(owner: owner, kind: .handler) { engine, binding, delivered in
            DeliveryLane<Snapshot>.nextSignal(deliverOn: executor, skipIf: delivered.isUnchanged) {
                [weak engine] delivery, signalNext in
                // Ownership at the moment of the call: a result that waited while the owner died is dropped here
                // (and the table ends the observation, which cancels this lane).
                guard let engine, let id = binding.id else { return }
                engine.observers.withLiveObserver(id) {
                    switch delivery.payload {
                    case .documents(let documents, let commit, _):
                        handler(documents, delivered.event(for: documents, commit: commit), signalNext)
                    case .failure(let failure):
                        onError?(failure.error)
                        signalNext()
                    }
                }
            }
        }
    }

    /// Registers an observer whose lane `makeLane` builds (from the engine, the binding that will name the observer
    /// in the table, and the result last delivered).
    func observe(
        owner: AnyObject?, kind: Registration.Kind,
        makeLane: (LiveQueryEngine, ObserverBinding, DeliveredResult) -> DeliveryLane<Snapshot>
    ) throws -> LiveQuery {
        let query = try compiled()
        let engine = collection.store.engine
        let binding = ObserverBinding()
        let delivered = DeliveredResult()
        let lane = makeLane(engine, binding, delivered)
        let registration = Registration(
            query: query, text: text, kind: kind, lane: lane, binding: binding, delivered: delivered, engine: engine)
        let handle = LiveQuery(
            registration: registration, engine: engine, delivered: delivered, ownsObservation: owner == nil,
            query: text)
        engine.observers.add(registration, identity: nil, owner: owner ?? handle, binding: binding)
        engine.register(registration)
        return handle
    }
}
