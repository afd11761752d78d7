public import DeliveryKit
public import Dispatch

/// What a delivery plugin makes: how observers receive what they observe — live queries and resources alike.
///
/// | Mode | Live queries | Resources |
/// |---|---|---|
/// | ``Mode-swift.enum/immediate`` | `observeLocal`: in the writer's wake, one at a time | `.immediate` |
/// | ``Mode-swift.enum/nextSignal`` | `observeLocalWithNextSignal`: nothing until the handler signals | `.deliverOn` a serial queue, latest only |
/// | ``Mode-swift.enum/deliverOnQueue`` | `observeLocal(deliverOn:)` | `.deliverOn(queue)` |
///
/// Every mode coalesces: while a handler is busy, newer results replace older ones, and only the latest is
/// delivered. Memory stays flat whatever the mode.
public struct ObservationDelivery: PipelineComponent, Sendable, CustomStringConvertible {
    /// How results are handed over.
    public enum Mode: Sendable, Hashable {
        /// Where the change happens, never nested or concurrent with itself.
        case immediate
        /// On a queue, one at a time, and the next only after the handler calls `signalNext()`.
        case nextSignal
        /// On a queue, one at a time.
        case deliverOnQueue

        /// The `type:` configuration names it by, which its plugin registers.
        package var type: String {
            switch self {
            case .immediate: "immediate"
            case .nextSignal: "next-signal"
            case .deliverOnQueue: "deliver-on-queue"
            }
        }
    }

    /// The mode.
    public var mode: Mode
    /// The queue handlers run on; nil gives each observer a serial queue of its own.
    public var queue: DispatchQueue?

    /// Makes a delivery.
    public init(_ mode: Mode, queue: DispatchQueue? = nil) {
        self.mode = mode
        self.queue = queue
    }

    /// The policy resource observers get: immediate, or delivery on the queue (a serial queue of their own when
    /// ``queue`` is nil), coalesced to the latest event while the handler is busy.
    public var resourcePolicy: any DeliveryPolicy {
        switch mode {
        case .immediate: return .immediate
        case .nextSignal, .deliverOnQueue:
            let executor =
                queue.map(DispatchQueueDeliveryExecutor.init) ?? .serialQueue(label: "tether.pipeline.delivery")
            return .deliverOn(executor)
        }
    }

    /// `next-signal on tether.sample.consumer`.
    public var description: String {
        mode.type + (queue.map { " on \($0.label)" } ?? "")
    }
}
