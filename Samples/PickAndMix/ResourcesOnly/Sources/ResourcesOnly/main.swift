// Resources only: a Service over the in-memory transport, observers tied to their owners, one request for many
// callers. Exits non-zero if a promise is broken.

import Foundation
import ResourceKit
import TransportKit

final class Screen: Sendable {}

let transport = InMemoryTransport()
transport.route(
    "https://shop.example/items", reply: .json(#"[{"name": "pear"}, {"name": "fig"}]"#, delay: .milliseconds(20)))
let service = Service(baseURL: "https://shop.example", transport: transport)
var failures = 0

@MainActor
func check(_ condition: Bool, _ promise: String) {
    print(condition ? "✔ \(promise)" : "✘ \(promise)")
    if !condition { failures += 1 }
}

var screen: Screen? = Screen()
let items = service.resource("/items")
items.addObserver(owner: screen!) { resource, event in print("  screen heard \(event)") }
let loads = (0..<10).compactMap { _ in items.loadIfNeeded() }
_ = await loads[0].outcome
check(Set(loads.map(ObjectIdentifier.init)).count == 1, "ten loadIfNeeded() calls share one request")
check(transport.requests.count == 1, "the transport saw one request")
if case .array(let parsed)? = items.latestData?.typedContent(as: JSONValue.self) {
    check(parsed.first?["name"] == "pear", "the JSON was parsed")
} else {
    check(false, "the JSON was parsed")
}
check(items.hasObservers, "observed while the screen lives")
screen = nil
check(
    service.flushUnused() >= 0 && !items.hasObservers, "no observers once the screen is gone, without removeObservers")
exit(failures == 0 ? 0 : 1)
