import Dispatch
import TetherConcurrency

/// The settings every delivery plugin takes: which queue handlers run on.
///
/// ```yaml
/// delivery: { type: deliver-on-queue, queue: ui }   # observers naming the same queue share it
/// ```
package struct DeliveryQueueSettings: Decodable, Sendable {
    /// The queue's name; observers naming the same one share one serial queue. Nil gives each observer its own.
    package var queue: String?

    /// The keys.
    package enum CodingKeys: String, CodingKey, CaseIterable {
        case queue
    }

    /// A queue per observer.
    package init(queue: String? = nil) {
        self.queue = queue
    }

    /// Decodes the settings.
    package init(from decoder: any Decoder) throws {
        let settings = try decoder.settings(CodingKeys.self)
        queue = try settings.decode(.queue, as: String.self)
        if let queue, queue.isEmpty { try settings.invalid(.queue, "a queue name cannot be empty") }
    }

    /// The shared queue named `queue`, made once per name.
    func dispatchQueue() -> DispatchQueue? {
        queue.map(NamedQueues.queue(named:))
    }
}

/// Serial queues by name, shared by every delivery that names them.
enum NamedQueues {
    private static let queues = LockedValue<[String: DispatchQueue]>([:])

    static func queue(named name: String) -> DispatchQueue {
        queues.withLock { queues in
            if let queue = queues[name] { return queue }
            let queue = DispatchQueue(label: "tether.pipeline.\(name)")
            queues[name] = queue
            return queue
        }
    }
}

/// `type: immediate` — results are handed over in the writer's wake, one at a time, never nested.
package struct ImmediateDeliveryPlugin: PipelinePlugin {
    /// "immediate".
    package let type = ObservationDelivery.Mode.immediate.type
    /// Makes the plugin.
    package init() {}
    /// No queue.
    package var defaultSettings: MemoryPersistencePlugin.Settings { .init() }
    /// Immediate delivery.
    package func make(_ settings: MemoryPersistencePlugin.Settings, context: AssemblyContext) throws
        -> ObservationDelivery
    {
        ObservationDelivery(.immediate)
    }
}

/// `type: next-signal` — Ditto's back pressure: nothing more is delivered until the handler calls `signalNext()`,
/// then only the latest result, if it changed. The default.
package struct NextSignalDeliveryPlugin: PipelinePlugin {
    /// "next-signal".
    package let type = ObservationDelivery.Mode.nextSignal.type
    /// Makes the plugin.
    package init() {}
    /// A queue per observer.
    package var defaultSettings: DeliveryQueueSettings { .init() }
    /// Next-signal delivery.
    package func make(_ settings: DeliveryQueueSettings, context: AssemblyContext) throws -> ObservationDelivery {
        ObservationDelivery(.nextSignal, queue: settings.dispatchQueue())
    }
}

/// `type: deliver-on-queue` — results are handed over on a queue, one at a time, the latest while the handler was
/// busy.
package struct DeliverOnQueuePlugin: PipelinePlugin {
    /// "deliver-on-queue".
    package let type = ObservationDelivery.Mode.deliverOnQueue.type
    /// Makes the plugin.
    package init() {}
    /// A queue per observer.
    package var defaultSettings: DeliveryQueueSettings { .init() }
    /// Delivery on the queue.
    package func make(_ settings: DeliveryQueueSettings, context: AssemblyContext) throws -> ObservationDelivery {
        ObservationDelivery(.deliverOnQueue, queue: settings.dispatchQueue())
    }
}
