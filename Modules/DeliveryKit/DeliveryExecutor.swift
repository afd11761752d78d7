public import Dispatch

/// Where a lane runs its observer's handler: the extension point for executors (a dispatch queue, an event loop).
///
/// `execute` may run `work` at once on the calling thread or later on another one. Work given to one executor by
/// one lane never overlaps: a lane starts a delivery only after the previous one was signalled.
public protocol DeliveryExecutor: Sendable {
    /// Runs `work` once.
    func execute(_ work: @escaping @Sendable () -> Void)
}

/// Runs handlers synchronously, in the context of whoever made the delivery possible: the producer that submitted,
/// or the thread that signalled.
///
/// Re-entrancy never nests: work started from inside work already running on this executor, on the same thread,
/// runs right after it returns (a per-thread trampoline), so a handler that signals inside itself, or a producer
/// submitting while a handler runs, never grows the stack.
public struct InlineDeliveryExecutor: DeliveryExecutor {
    /// Makes the inline executor.
    public init() {}

    /// Runs `work` now, or right after the work this thread is already running inline.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        Trampoline.run(work)
    }
}

/// Runs handlers on a dispatch queue, asynchronously.
public struct DispatchQueueDeliveryExecutor: DeliveryExecutor {
    /// The queue handlers run on.
    public let queue: DispatchQueue

    /// Makes an executor for `queue`.
    public init(_ queue: DispatchQueue) {
        self.queue = queue
    }

    /// Submits `work` to the queue.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }
}

extension DeliveryExecutor where Self == InlineDeliveryExecutor {
    /// Runs handlers synchronously in the delivering context (see ``InlineDeliveryExecutor``).
    public static var inline: InlineDeliveryExecutor { InlineDeliveryExecutor() }
}

extension DeliveryExecutor where Self == DispatchQueueDeliveryExecutor {
    /// Runs handlers on `queue`.
    public static func queue(_ queue: DispatchQueue) -> DispatchQueueDeliveryExecutor {
        DispatchQueueDeliveryExecutor(queue)
    }

    /// Runs handlers on a new serial queue of their own, which never depends on the main queue being drained:
    /// the default for next-signal observers on Linux servers.
    public static func serialQueue(label: String = "tether.delivery") -> DispatchQueueDeliveryExecutor {
        DispatchQueueDeliveryExecutor(DispatchQueue(label: label, target: .global()))
    }
}
