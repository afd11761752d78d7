// The examples of Docs/DeliveryKit.md, compiled (see OwnershipKitSnippets.swift).
import DeliveryKit
import DeliveryMetricsAdapter
import Dispatch
import LiveQueryKit
import OwnershipKit
import TetherConcurrency

/// What the examples process: a snapshot of some state.
struct Snapshot: Sendable, Equatable {
    var items: [String]
}

struct Item: Sendable, Equatable, Codable {
    var name: String
}

@MainActor
final class ItemsViewModel {
    var items: [Item] = []
}

/// Processes `payload`, then calls `done` (on another queue, some time later).
func process<Payload: Sendable>(_ payload: Payload, _ done: @escaping @Sendable () -> Void) {
    DispatchQueue.global().async { done() }
}

func process<Payload: Sendable>(_ payload: Payload) {}

func processAsynchronously<Payload: Sendable>(_ payload: Payload, _ done: @escaping @Sendable () -> Void) {
    DispatchQueue.global().async { done() }
}

/// An observable of snapshots, as the "BAD" example uses it.
final class SnapshotSource: Sendable {
    let table = ObserverTable<TemperatureClosureLike, Snapshot> { observer, notice in
        if case .event(let snapshot) = notice { observer.body(snapshot) }
    }
    func addObserver(owner: AnyObject, _ body: @escaping @Sendable (Snapshot) -> Void) {
        table.add(TemperatureClosureLike(body: body), owner: owner)
    }
}

struct TemperatureClosureLike: Sendable {
    let body: @Sendable (Snapshot) -> Void
}

enum DeliveryKitSnippets {
    static func usage() -> DeliveryLane<[Document]> {
        // snippet: DeliveryKit.make-lane
        let lane = DeliveryLane<[Document]>.nextSignal { delivery, signalNext in
            process(delivery.payload) { signalNext() }
        }
        // end snippet
        return lane
    }

    static func ruleOfThumb(
        observers: SnapshotSource, owner: AnyObject, processingQueue: DispatchQueue, liveQueryQueue: DispatchQueue
    ) -> [DeliveryLane<Snapshot>] {
        let `self` = owner
        // snippet: DeliveryKit.rule-of-thumb
        // BAD: every snapshot is copied into a work item; a slow queue accumulates them all.
        observers.addObserver(owner: self) { snapshot in
            processingQueue.async { process(snapshot) }
        }

        // BETTER: next-signal; the lane holds the latest snapshot, at most one, until you are ready.
        let better = DeliveryLane<Snapshot>.nextSignal { delivery, signalNext in
            processingQueue.async {
                process(delivery.payload)
                signalNext()  // done: send me the latest, if it changed
            }
        }

        // CONVENIENT: deliver-on-queue; all work happens inside the handler, and the lane signals when it returns.
        let convenient = DeliveryLane<Snapshot>.deliverOn(.queue(processingQueue)) { delivery in
            process(delivery.payload)  // IMPORTANT: no dispatching elsewhere, no async APIs holding it
        }

        // VERSATILE: next-signal on a queue of your choice, with asynchronous work that holds the payload.
        let versatile = DeliveryLane<Snapshot>.nextSignal(deliverOn: .queue(liveQueryQueue)) { delivery, signalNext in
            processAsynchronously(delivery.payload) { signalNext() }
        }
        // end snippet
        return [better, convenient, versatile]
    }

    @MainActor
    static func isolated(viewModel: ItemsViewModel) -> DeliveryLane<[Item]> {
        // snippet: DeliveryKit.isolated
        let lane = DeliveryLane<[Item]>.isolated { @MainActor delivery in
            viewModel.items = delivery.payload
        }
        // end snippet
        return lane
    }

    static func metrics() -> DeliveryLane<Snapshot> {
        // snippet: DeliveryKit.metrics
        let recorder = SwiftMetricsDeliveryRecorder(dimensions: [("observer", "dashboard")])
        let lane = DeliveryLane<Snapshot>.nextSignal(recorder: recorder) { delivery, signalNext in
            process(delivery.payload) { signalNext() }
        }
        // tether_delivery_delivered_total, tether_delivery_coalesced_total,
        // tether_delivery_skipped_unchanged_total, tether_delivery_held (gauge)
        // end snippet
        return lane
    }
}
