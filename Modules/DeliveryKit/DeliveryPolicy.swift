/// The role of a delivery policy as a value: how an observer added to a `Resource` (or any observable built on
/// DeliveryKit) is to receive what it is sent.
///
/// A policy makes the ``DeliveryLane`` that stands between the notifier and the observer's handler. Pass one to
/// `addObserver(…, delivery:)`; without one, observers are called directly, in the notifier's context.
///
/// ```swift
/// resource.addObserver(owner: self, delivery: .deliverOn(.serialQueue())) { resource, event in … }
/// ```
public protocol DeliveryPolicy: Sendable {
    /// Makes a lane that hands payloads to `handler` under this policy (coalescing to the latest payload).
    func makeLane<Payload: Sendable>(
        for handler: @escaping @Sendable (Delivery<Payload>) -> Void
    ) -> DeliveryLane<Payload>
}

/// Immediate delivery through a lane: the handler runs in the context that submits, never nested and never
/// concurrently with itself; a submission meanwhile waits, coalesced (see ``DeliveryLane/immediate(coalescing:skipIf:recorder:_:)``).
public struct ImmediateDeliveryPolicy: DeliveryPolicy {
    /// Makes the policy.
    public init() {}

    /// An immediate lane.
    public func makeLane<Payload: Sendable>(
        for handler: @escaping @Sendable (Delivery<Payload>) -> Void
    ) -> DeliveryLane<Payload> {
        .immediate(handler)
    }
}

/// Delivery on an executor: the handler runs there, and a payload submitted while the handler is busy waits,
/// coalesced to the latest (see ``DeliveryLane/deliverOn(_:coalescing:skipIf:recorder:_:)``).
public struct ExecutorDeliveryPolicy: DeliveryPolicy {
    /// Where handlers run.
    public let executor: any DeliveryExecutor

    /// Makes the policy.
    public init(_ executor: any DeliveryExecutor) {
        self.executor = executor
    }

    /// A deliver-on lane on ``executor``.
    public func makeLane<Payload: Sendable>(
        for handler: @escaping @Sendable (Delivery<Payload>) -> Void
    ) -> DeliveryLane<Payload> {
        .deliverOn(executor, handler)
    }
}

extension DeliveryPolicy where Self == ImmediateDeliveryPolicy {
    /// Immediate delivery through a lane (see ``ImmediateDeliveryPolicy``).
    public static var immediate: ImmediateDeliveryPolicy { ImmediateDeliveryPolicy() }
}

extension DeliveryPolicy where Self == ExecutorDeliveryPolicy {
    /// Delivery on `executor`, coalesced while the handler is busy (see ``ExecutorDeliveryPolicy``). Each observer
    /// gets a lane of its own; pass `.serialQueue()` for a queue of its own, or `.queue(q)` to share `q`.
    public static func deliverOn(_ executor: any DeliveryExecutor) -> ExecutorDeliveryPolicy {
        ExecutorDeliveryPolicy(executor)
    }
}
