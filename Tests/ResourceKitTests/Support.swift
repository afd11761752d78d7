import Foundation
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TransportKit

let base = "https://api.example.com/v1"

/// A service on an in-memory transport and a manual clock at t = 1000 s, and the leak harness: after the test,
/// once its requests are answered and the service dropped, the service, its resources and every tracked object must
/// be gone — a retain cycle fails the test. Resources hold their service's workings, which hold the transport, so
/// the transport outlives the test exactly when some resource leaks: it is tracked for that.
final class Fixture: Sendable {
    let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))
    let leaks = LeakTracker()
    private let serviceBox: LockedValue<Service?>
    private let transportBox: LockedValue<InMemoryTransport?>

    init(cacheCountLimit: Int = 2048, standardTransformers: StandardTransformers = .all) {
        let transport = InMemoryTransport(timeSource: clock)
        transportBox = LockedValue(transport)
        leaks.track(transport, "transport (kept by any leaked resource)")
        let service = Service(
            baseURL: base, transport: transport, timeSource: clock, standardTransformers: standardTransformers,
            cacheCountLimit: cacheCountLimit)
        serviceBox = LockedValue(service)
        leaks.track(service, "service")
    }

    var service: Service {
        serviceBox.withLock { $0! }
    }

    var transport: InMemoryTransport {
        transportBox.withLock { $0! }
    }

    /// Routes GET `path` (below the base) to `reply`.
    func route(_ path: String, _ reply: InMemoryTransport.Reply, method: HTTPMethod? = .get) {
        transport.route(method, base + path, reply: reply)
    }

    /// Queues `replies` for the next GETs of `path`.
    func enqueue(_ path: String, _ replies: InMemoryTransport.Reply...) {
        for reply in replies { transport.enqueue(.get, base + path, reply) }
    }

    func requestCount(_ path: String, method: HTTPMethod? = nil) -> Int {
        transport.requestCount(to: base + path, method: method)
    }

    /// Lets go of the service, answers what is still in flight, flushes, and expects everything tracked to be gone.
    func expectNoLeaks(sourceLocation: SourceLocation = #_sourceLocation) async {
        var attempts = 0
        while transport.inFlightCount > 0 || clock.sleeperCount > 0, attempts < 1000 {
            clock.advance(by: .seconds(3600))
            await Task.yield()
            attempts += 1
        }
        let service = serviceBox.withLock { $0.take() }
        _ = consume service
        let transport = transportBox.withLock { $0.take() }
        _ = consume transport
        // A load's task may still be returning when the transport reports nothing in flight: give it up to 5 s
        // (100 yields were not always enough on a loaded machine).
        let survivors = await leaks.survivors(waitingUpTo: .seconds(5))
        #expect(survivors.isEmpty, "leaked: \(survivors)", sourceLocation: sourceLocation)
    }
}

/// Runs `body` with a fresh fixture, then the leak harness.
func withFixture(
    cacheCountLimit: Int = 2048, standardTransformers: StandardTransformers = .all,
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (Fixture) async throws -> Void
) async rethrows {
    let fixture = Fixture(cacheCountLimit: cacheCountLimit, standardTransformers: standardTransformers)
    try await body(fixture)
    await fixture.expectNoLeaks(sourceLocation: sourceLocation)
}

/// An observer that records what it is told, with the resource's loading state at each event.
final class EventLog: ResourceObserver {
    struct Entry: Sendable, Equatable {
        let event: ResourceEvent
        let isLoading: Bool
    }

    private let entries = LockedValue<[Entry]>([])
    private let stops = LockedValue(0)

    init() {}

    func resourceChanged(_ resource: Resource, event: ResourceEvent) {
        let isLoading = resource.isLoading
        entries.withLock { $0.append(Entry(event: event, isLoading: isLoading)) }
    }

    func stoppedObserving(resource: Resource) {
        stops.withLock { $0 += 1 }
    }

    var events: [ResourceEvent] { entries.withLock { $0.map(\.event) } }
    var log: [Entry] { entries.withLock { $0 } }
    var stopCount: Int { stops.withLock { $0 } }

    func clear() { entries.withLock { $0.removeAll() } }
}

/// An owner for observers.
final class Owner: Sendable {}

/// For checking what observers saw against the steps a reference went through.
extension Array where Element: Equatable {
    /// The elements, each run of equal ones kept once.
    func removingRepeats() -> [Element] {
        reduce(into: []) { result, element in if result.last != element { result.append(element) } }
    }

    /// Whether every element appears in `other`, in this order (others between them allowed).
    func isSubsequence(of other: [Element]) -> Bool {
        var rest = other[...]
        for element in self {
            guard let index = rest.firstIndex(of: element) else { return false }
            rest = rest[(index + 1)...]
        }
        return true
    }
}
