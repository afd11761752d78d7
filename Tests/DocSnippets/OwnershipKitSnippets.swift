import DeliveryKit
// The examples of Docs/OwnershipKit.md, compiled. Each `// snippet:` region is the doc's code block, byte for byte
// once its indentation is removed (DocSnippetSyncTests checks it).
import Foundation
import OwnershipKit

// snippet: OwnershipKit.observable-type
protocol TemperatureObserver: Sendable {
    func thermometer(_ notice: ObserverNotice<Double>)
}

/// A closure as an observer (closures and structs always need an external owner).
struct TemperatureClosure: TemperatureObserver {
    let body: @Sendable (ObserverNotice<Double>) -> Void
    func thermometer(_ notice: ObserverNotice<Double>) { body(notice) }
}

final class Thermometer: Sendable {
    let observers = ObserverTable<any TemperatureObserver, Double> { $0.thermometer($1) }

    func addObserver(_ observer: some TemperatureObserver & AnyObject) {
        observers.add(observer, as: { $0 })  // self-owned
    }
    func addObserver(_ observer: any TemperatureObserver, owner: AnyObject) {
        observers.add(observer, owner: owner)  // external owner
    }
    func addObserver(owner: AnyObject, _ closure: @escaping @Sendable (ObserverNotice<Double>) -> Void) {
        observers.add(TemperatureClosure(body: closure), owner: owner)
    }
    func removeObservers(ownedBy owner: AnyObject?) { observers.removeObservers(ownedBy: owner) }
}
// end snippet

/// Logs what it hears; a struct, so it always needs an owner.
struct TemperatureLogger: TemperatureObserver {
    func thermometer(_ notice: ObserverNotice<Double>) { print(notice) }
}

enum OwnershipKitSnippets {
    static func makeTable() -> ObserverTable<any TemperatureObserver, Double> {
        // snippet: OwnershipKit.table
        let observers = ObserverTable<any TemperatureObserver, Double> { observer, notice in
            observer.thermometer(notice)  // notice: .added, .event(Double) or .stopped
        }
        // end snippet
        return observers
    }

    static func ownerHeld(thermometer: Thermometer, screen: AnyObject) {
        // snippet: OwnershipKit.owner-held
        thermometer.addObserver(TemperatureLogger(), owner: screen)
        // end snippet
    }

    static func token(thermometer: Thermometer) {
        // snippet: OwnershipKit.token
        var tokens: Set<ObservationToken> = []
        thermometer.observers.observe(TemperatureLogger()).store(in: &tokens)
        tokens.removeAll()  // ends the observation; the logger hears .stopped before this returns
        // end snippet
    }

    static func lane(screen: AnyObject, render: @escaping @Sendable (Double) -> Void) {
        // snippet: OwnershipKit.lane
        /// Hands events to a lane; the lane calls the screen's code later, on its queue.
        struct LaneObserver: Sendable {
            let lane: DeliveryLane<Double>
            func hand(_ notice: ObserverNotice<Double>) {
                if case .event(let celsius) = notice { lane.submit(celsius) }
            }
        }

        let table = ObserverTable<LaneObserver, Double> { observer, notice in observer.hand(notice) }
        let binding = ObserverBinding()
        let lane = DeliveryLane<Double>.deliverOn(.serialQueue()) { [weak table] delivery in
            guard let table, let id = binding.id else { return }
            table.withLiveObserver(id) { render(delivery.payload) }  // never after the owner's deinit
        }
        table.add(LaneObserver(lane: lane), identity: nil, owner: screen, binding: binding)
        // end snippet
    }
}

// snippet: OwnershipKit.self-owned
final class DashboardModel: TemperatureObserver {
    init(thermometer: Thermometer) { thermometer.addObserver(self) }
    func thermometer(_ notice: ObserverNotice<Double>) {
        if case .event(let celsius) = notice { print("now \(celsius) °C") }
    }
}
// end snippet

final class TemperatureScreen: TemperatureObserver {
    let thermometer = Thermometer()

    func show(_ celsius: Double) { print(celsius) }
    func thermometer(_ notice: ObserverNotice<Double>) {}

    func closure() {
        // snippet: OwnershipKit.closure
        thermometer.addObserver(owner: self) { [weak self] notice in
            if case .event(let celsius) = notice { self?.show(celsius) }
        }
        // end snippet
    }
}

@MainActor
final class SwitchingScreen: TemperatureObserver {
    nonisolated func thermometer(_ notice: ObserverNotice<Double>) {}
    nonisolated func update(_ notice: ObserverNotice<Double>) {}

    // snippet: OwnershipKit.switching
    var displayed: Thermometer? {
        didSet {
            oldValue?.removeObservers(ownedBy: self)  // both observers below, because self owns both
            displayed?.addObserver(self)
            displayed?.addObserver(owner: self) { [weak self] notice in self?.update(notice) }
        }
    }
    // end snippet
}
