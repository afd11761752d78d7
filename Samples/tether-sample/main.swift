// tether-sample: Tether's ownership rules at work, checked as they run.
//
// The full sample runner (configuration.yaml, loopback server, SQLite file) arrives with PipelineKit; until then
// this walks through OwnershipKit's three observer flavours, owner death, removal by owner and tokens, then
// DeliveryKit's back pressure, and exits non-zero if any promise is broken.

import Dispatch
import Foundation
import Synchronization
import Tether

/// Something observable: a thermometer whose observers live exactly as long as their owners.
final class Thermometer: Sendable {
    let observers = ObserverTable<any TemperatureObserver, Double> { observer, notice in
        observer.thermometer(notice)
    }
    func addObserver(_ observer: some TemperatureObserver & AnyObject) { observers.add(observer, as: { $0 }) }
    func addObserver(_ observer: any TemperatureObserver, owner: AnyObject) { observers.add(observer, owner: owner) }
    func addObserver(owner: AnyObject, _ closure: @escaping @Sendable (ObserverNotice<Double>) -> Void) {
        observers.add(ClosureObserver(closure: closure), owner: owner)
    }
    func removeObservers(ownedBy owner: AnyObject?) { observers.removeObservers(ownedBy: owner) }
    func record(_ celsius: Double) { observers.notify(celsius) }
}

protocol TemperatureObserver: Sendable {
    func thermometer(_ notice: ObserverNotice<Double>)
}

struct ClosureObserver: TemperatureObserver {
    let closure: @Sendable (ObserverNotice<Double>) -> Void
    func thermometer(_ notice: ObserverNotice<Double>) { closure(notice) }
}

/// Prints what it hears; counts how many of its kind are alive.
final class Display: TemperatureObserver {
    let name: String
    init(_ name: String) {
        self.name = name
        print("  + \(name) created")
    }
    deinit { print("  - \(name) deallocated") }
    func thermometer(_ notice: ObserverNotice<Double>) { print("  \(name) hears \(notice)") }
}

final class Screen: Sendable {}

var failures = 0
@MainActor
func check(_ condition: Bool, _ promise: String) {
    print(condition ? "  ✔ \(promise)" : "  ✘ \(promise)")
    if !condition { failures += 1 }
}

let thermometer = Thermometer()

print("1. Self-owned: held weakly, observes until deallocated")
do {
    let display = Display("wall display")
    thermometer.addObserver(display)
    thermometer.record(20.5)
    check(thermometer.observers.observerCount == 1, "one observer while the display lives")
}
check(thermometer.observers.observerCount == 0, "none once it is gone, without any removal call")

print("2. External owner: held strongly until the owner is gone")
var screen: Screen? = Screen()
thermometer.addObserver(Display("glue display"), owner: screen!)
thermometer.addObserver(owner: screen!) { notice in print("  closure hears \(notice)") }
thermometer.record(21.0)
check(thermometer.observers.observerCount == 2, "the screen keeps both observers alive")
screen = nil
thermometer.record(21.5)
check(thermometer.observers.observerCount == 0, "the screen's death ended both, unasked")

print("3. removeObservers(ownedBy:)")
let settings = Screen()
thermometer.addObserver(Display("settings display"), owner: settings)
thermometer.removeObservers(ownedBy: settings)
thermometer.record(22.0)
check(thermometer.observers.observerCount == 0, "removal by owner ends the observation at once")

print("4. Tokens")
var token: ObservationToken? = thermometer.observers.observe(ClosureObserver { print("  token observer hears \($0)") })
thermometer.record(22.5)
token = nil
thermometer.record(23.0)
check(thermometer.observers.observerCount == 0, "dropping the token ended the observation")

print("5. Back pressure: 20,000 snapshots at an observer that takes 1 ms each")
final class Reading: Sendable {
    static let alive = Mutex(0)
    let celsius: Double
    init(_ celsius: Double) {
        self.celsius = celsius
        Self.alive.withLock { $0 += 1 }
    }
    deinit { Self.alive.withLock { $0 -= 1 } }
}
let processing = DispatchQueue(label: "processing")
let lastShown = Mutex(0.0)
let lane = DeliveryLane<Reading>.nextSignal { delivery, signalNext in
    let reading = Mutex<Reading?>(delivery.payload)
    processing.async {
        usleep(1_000)  // a slow consumer
        if let shown = reading.withLock({ $0.take() }) { lastShown.withLock { $0 = shown.celsius } }
        signalNext()  // done and released: send the latest
    }
}
var mostHeld = 0
for step in 1...20_000 {
    lane.submit(Reading(Double(step) / 100))
    mostHeld = max(mostHeld, Reading.alive.withLock { $0 })
}
while lastShown.withLock({ $0 }) != 200.0 { usleep(1_000) }
let statistics = lane.statistics
print("  \(statistics.delivered) deliveries for \(statistics.submitted) snapshots; \(statistics.coalesced) coalesced")
check(mostHeld <= 2, "never more than 2 snapshots held (at most \(mostHeld))")
check(lastShown.withLock { $0 } == 200.0, "the observer ends on the final snapshot")

print(failures == 0 ? "All promises held." : "\(failures) promise(s) broken.")
exit(failures == 0 ? 0 : 1)
