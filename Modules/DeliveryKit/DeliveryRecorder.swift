/// Receives a lane's counts as they change, so back pressure can be watched at work: the extension point for
/// metrics backends (`DeliveryMetricsAdapter` reports them through swift-metrics).
///
/// Called on whichever thread submitted or signalled, outside the lane's lock; keep it cheap.
public protocol DeliveryRecorder: Sendable {
    /// A delivery began.
    func recordDelivery()
    /// A payload was folded into the one already waiting (replaced or merged) instead of queuing.
    func recordCoalesced()
    /// A waiting payload was dropped because it equalled the last one delivered.
    func recordSkippedUnchanged()
    /// How many payloads the lane holds now: the one being processed plus the one waiting (never more than 2).
    func recordHeld(_ count: Int)
}

/// A lane's counts since it was made.
public struct DeliveryStatistics: Sendable, Hashable, Codable {
    /// Payloads submitted.
    public var submitted = 0
    /// Deliveries begun.
    public var delivered = 0
    /// Payloads folded into a waiting one instead of being delivered on their own.
    public var coalesced = 0
    /// Waiting payloads dropped because they equalled the last one delivered.
    public var skippedUnchanged = 0
    /// Payloads released unseen by cancellation.
    public var droppedByCancellation = 0
    /// The most payloads the lane held at once (being processed plus waiting): at most 2.
    public var heldHighWater = 0

    /// Makes zero counts.
    public init() {}
}
