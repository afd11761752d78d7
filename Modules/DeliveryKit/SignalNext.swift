/// Tells a lane that its observer has finished with a delivery and is ready for the next.
///
/// Call it from any thread, at any time after the delivery began. Calling it more than once is harmless: only the
/// first call for a delivery counts. Until it is called, the lane delivers nothing more to this observer — newer
/// payloads coalesce into one waiting payload — and nothing else is held up: not the producer, not other lanes.
public struct SignalNext: Sendable {
    /// The signal given to ``init(_:)``; nil for a lane's own.
    private let signal: (@Sendable () -> Void)?
    /// A lane's own signal: its ``LaneSignal`` (one per lane, which holds the lane weakly), the delivery's sequence
    /// number, and a function that captures nothing — no closure allocated per delivery, and copying a signal is a
    /// retain. The function is made where the lane's code is specialised for its payload, so it runs that code.
    private let target: (any AnyObject & Sendable)?
    private let signalTarget: (@Sendable (_ target: AnyObject, _ sequence: UInt64) -> Void)?
    private let sequence: UInt64

    /// Makes a signal that runs `signal` (the lane's, for one delivery).
    public init(_ signal: @escaping @Sendable () -> Void) {
        self.signal = signal
        self.target = nil
        self.signalTarget = nil
        self.sequence = 0
    }

    /// The signal for delivery `sequence` of the lane `target` stands for, given by `signalTarget(target, sequence)`.
    @usableFromInline
    init(
        target: any AnyObject & Sendable, sequence: UInt64,
        signalTarget: @escaping @Sendable (AnyObject, UInt64) -> Void
    ) {
        self.signal = nil
        self.target = target
        self.signalTarget = signalTarget
        self.sequence = sequence
    }

    /// Signals that the delivery is processed and its payload released.
    public func callAsFunction() {
        if let signal {
            signal()
        } else if let target, let signalTarget {
            signalTarget(target, sequence)
        }
    }
}

/// What a lane's signals hold: the lane, weakly — a signal kept after its lane is gone keeps nothing alive and does
/// nothing. One per lane, made at its first next-signal delivery.
@usableFromInline
final class LaneSignal<Payload: Sendable>: Sendable {
    @usableFromInline weak let lane: DeliveryLane<Payload>?

    @inlinable
    init(_ lane: DeliveryLane<Payload>) {
        self.lane = lane
    }
}
