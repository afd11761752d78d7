// The hot paths whose cost CI guards by instruction count, which does not move with the machine's load:
//   tether-instructions <scenario> <iterations>
// runs one scenario that many times. Scripts/check-instructions.sh runs each under callgrind twice — with one
// iteration and with one more than its count — and compares the difference per iteration with
// Benchmarks/InstructionCounts/baseline.tsv.
// Every scenario is synchronous: this machine's valgrind (3.19) stops on the threads Swift concurrency starts.

import Foundation
import ResourceKit
import TetherClock
import TransportKit

let arguments = CommandLine.arguments.dropFirst()
guard let scenario = arguments.first, let iterations = arguments.dropFirst().first.flatMap({ Int($0) }) else {
    FileHandle.standardError.write(Data("usage: tether-instructions <scenario> <iterations>\n".utf8))
    exit(2)
}

let base = "https://api.example.com/v1"

func service() -> (Service, InMemoryTransport) {
    let transport = InMemoryTransport(timeSource: ManualTimeSource())
    return (Service(baseURL: base, transport: transport), transport)
}

final class Owner: Sendable {}

switch scenario {
case "lookup":
    // A resource looked up by path, as a screen does on every appearance.
    let (service, _) = service()
    let paths = (0..<20).map { "/items/\($0)" }
    for path in paths { _ = service.resource(path) }
    for index in 0..<iterations { _ = service.resource(paths[index % 20]) }
case "resource-from-url":
    // A resource made from a URL value not seen before (cache growth by URL object). The URLs are parsed first, as
    // many whatever the iterations, so that the parse is not counted.
    let (service, _) = service()
    let urls = (0..<max(iterations, 1_000)).map { URL(string: "\(base)/items/\($0)?page=1")! }
    for url in urls.prefix(iterations) { _ = service.resource(absoluteURL: url) }
    withExtendedLifetime(service) {}
case "load-if-needed":
    // loadIfNeeded() on a resource whose data is fresh: the call every observer makes.
    let (service, _) = service()
    service.configure { $0.expirationTime = .seconds(3600) }
    let resource = service.resource("/fresh")
    resource.overrideLocalContent(with: "fresh")
    for _ in 0..<iterations { _ = resource.loadIfNeeded() }
case "observer-churn":
    // An owner comes and goes beside 100 others: a closure observer added, then removed with its owner.
    let (service, _) = service()
    let resource = service.resource("/churn")
    let owners = (0..<100).map { _ in Owner() }
    for owner in owners { resource.addObserver(owner: owner) { _, _ in } }
    for _ in 0..<iterations {
        let owner = Owner()
        resource.addObserver(owner: owner) { _, _ in }
        resource.removeObservers(ownedBy: owner)
    }
    withExtendedLifetime(owners) {}
case "fan-out":
    // One change to a resource with 1,000 closure observers.
    let (service, _) = service()
    let resource = service.resource("/fan-out")
    let owners = (0..<1_000).map { _ in Owner() }
    for owner in owners { resource.addObserver(owner: owner) { _, _ in } }
    for index in 0..<iterations { resource.overrideLocalContent(with: "\(index)") }
    withExtendedLifetime(owners) {}
default:
    FileHandle.standardError.write(Data("unknown scenario \(scenario)\n".utf8))
    exit(2)
}
