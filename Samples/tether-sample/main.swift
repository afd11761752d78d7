// tether-sample: Tether's ownership rules at work, checked as they run.
//
// The full sample runner (configuration.yaml, loopback server, SQLite file) arrives with PipelineKit; until then
// this walks through OwnershipKit's three observer flavours, owner death, removal by owner and tokens, and exits
// non-zero if any promise is broken.

import Foundation
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

print(failures == 0 ? "All ownership promises held." : "\(failures) promise(s) broken.")
exit(failures == 0 ? 0 : 1)
