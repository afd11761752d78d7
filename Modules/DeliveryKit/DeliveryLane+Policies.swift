/// The delivery policies. Each is the same lane — the same bound, the same coalescing — differing only in where the
/// handler runs and in who signals:
///
/// | Policy | Handler runs | `signalNext` is called |
/// |---|---|---|
/// | ``DeliveryLane/nextSignal(deliverOn:coalescing:skipIf:recorder:_:)`` | on the executor (default: a serial queue of its own) | by the observer, when it is done |
/// | ``DeliveryLane/deliverOn(_:coalescing:skipIf:recorder:_:)`` | on the executor | by the lane, when the handler returns |
/// | ``DeliveryLane/immediate(coalescing:skipIf:recorder:_:)`` | synchronously, in the producer's (or signaller's) context | by the lane, when the handler returns |
/// | ``DeliveryLane/isolated(coalescing:skipIf:recorder:_:)`` | in a task, on the handler's isolation (`@MainActor`, an actor) | by the lane, when the async handler returns |
extension DeliveryLane {
    /// Next-signal, the general form: nothing more is delivered until the handler's `SignalNext` is called.
    /// Use it whenever the payload outlives the handler (asynchronous work, another queue).
    public static func nextSignal(
        deliverOn executor: any DeliveryExecutor = .serialQueue(),
        coalescing: Coalescing<Payload> = .latest,
        skipIf isUnchanged: (@Sendable (Payload, Payload) -> Bool)? = nil,
        recorder: (any DeliveryRecorder)? = nil,
        _ handler: @escaping @Sendable (Delivery<Payload>, SignalNext) -> Void
    ) -> DeliveryLane {
        DeliveryLane(on: executor, coalescing: coalescing, skipIf: isUnchanged, recorder: recorder, handler: handler)
    }

    /// Deliver-on-queue: the handler runs on `executor`, and the lane signals when it returns. Use it only when the
    /// payload is processed and released inside the handler.
    public static func deliverOn(
        _ executor: any DeliveryExecutor,
        coalescing: Coalescing<Payload> = .latest,
        skipIf isUnchanged: (@Sendable (Payload, Payload) -> Bool)? = nil,
        recorder: (any DeliveryRecorder)? = nil,
        _ handler: @escaping @Sendable (Delivery<Payload>) -> Void
    ) -> DeliveryLane {
        DeliveryLane(
            executor: executor, coalescing: coalescing, isUnchanged: isUnchanged, recorder: recorder,
            handler: .returning(handler))
    }

    /// Immediate: the handler runs synchronously in the context that made the delivery possible — the producer's
    /// `submit`, or, when a payload waited, whichever thread finished the previous delivery — and the lane signals
    /// when it returns. Never concurrently with itself and never nested: a producer on another thread meanwhile
    /// only leaves its payload waiting.
    public static func immediate(
        coalescing: Coalescing<Payload> = .latest,
        skipIf isUnchanged: (@Sendable (Payload, Payload) -> Bool)? = nil,
        recorder: (any DeliveryRecorder)? = nil,
        _ handler: @escaping @Sendable (Delivery<Payload>) -> Void
    ) -> DeliveryLane {
        deliverOn(.inline, coalescing: coalescing, skipIf: isUnchanged, recorder: recorder, handler)
    }

    /// An async handler, run in a task on the handler's own isolation: pass a `@MainActor` closure and a main-actor
    /// view model observes with no hops by hand. The lane signals when the handler returns.
    public static func isolated(
        coalescing: Coalescing<Payload> = .latest,
        skipIf isUnchanged: (@Sendable (Payload, Payload) -> Bool)? = nil,
        recorder: (any DeliveryRecorder)? = nil,
        _ handler: @escaping @Sendable (Delivery<Payload>) async -> Void
    ) -> DeliveryLane {
        DeliveryLane(
            executor: .inline, coalescing: coalescing, isUnchanged: isUnchanged, recorder: recorder,
            handler: .asynchronous(handler))
    }
}
