import DeliveryKit
import Dispatch
import Foundation
import OwnershipKit
import ResourceKit
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite("Resource observers: Siesta's three flavours, with or without a delivery policy", .leakChecked)
struct ObserverTests {
    @Test("Self-owned: held weakly; it observes until deallocated, and does not keep the resource")
    func selfOwned() async {
        await withFixture { fixture in
            fixture.route("/items", .json("[]"))
            let items = fixture.service.resource("/items")
            var log: EventLog? = EventLog()
            fixture.leaks.track(log!, "self-owned observer")
            #expect(items.addObserver(log!) === items)
            items.addObserver(log!)
            #expect(items.observerCount == 1)
            _ = await items.load().outcome
            #expect(log?.events == [.observerAdded, .requested, .newData(.network)])
            log = nil
            #expect(!items.hasObservers)
            _ = await items.load().outcome
        }
    }

    @Test("Owned: held strongly until its owner goes; the same instance with two owners is one observer")
    func owned() async {
        await withFixture { fixture in
            let items = fixture.service.resource("/items")
            var first: Owner? = Owner()
            let second = Owner()
            do {
                let log = EventLog()
                fixture.leaks.track(log, "owned observer")
                items.addObserver(log, owner: first!).addObserver(log, owner: second)
            }
            #expect(items.observerCount == 1)
            first = nil
            #expect(items.hasObservers)
            items.removeObservers(ownedBy: second)
            #expect(!items.hasObservers)
            withExtendedLifetime(first) {}
        }
    }

    @Test("Closures: owned; removal sends stoppedObserving and nothing afterwards")
    func closures() async {
        await withFixture { fixture in
            let items = fixture.service.resource("/items")
            let events = LockedValue<[ResourceEvent]>([])
            let owner = Owner()
            items.addObserver(owner: owner) { _, event in events.withLock { $0.append(event) } }
            items.overrideLocalContent(with: "a")
            let log = EventLog()
            items.addObserver(log, owner: owner)
            items.removeObservers(ownedBy: owner)
            #expect(log.stopCount == 1)
            items.overrideLocalContent(with: "b")
            #expect(events.withLock { $0 } == [.observerAdded, .newData(.localOverride)])
            #expect(log.events == [.observerAdded])
        }
    }

    @Test("Tokens: the observer lasts as long as its token")
    func tokens() async {
        await withFixture { fixture in
            let items = fixture.service.resource("/items")
            let count = LockedValue(0)
            var token: ObservationToken? = items.observe { _, _ in count.withLock { $0 += 1 } }
            items.overrideLocalContent(with: "a")
            token = nil
            items.overrideLocalContent(with: "b")
            #expect(count.withLock { $0 } == 2)
            #expect(!items.hasObservers)
            withExtendedLifetime(token) {}
        }
    }

    @Test("A delivery policy: events arrive on the executor, coalesce while it is busy, and stop at removal")
    func policies() async throws {
        try await withFixture { fixture in
            let items = fixture.service.resource("/items")
            let queue = DispatchQueue(label: "observer")
            let gate = DispatchSemaphore(value: 0)
            let seen = LockedValue<[ResourceEvent]>([])
            let owner = Owner()
            items.addObserver(owner: owner, delivery: .deliverOn(.queue(queue))) { _, event in
                if event == .observerAdded { gate.wait() }  // busy until released
                seen.withLock { $0.append(event) }
            }
            for index in 0..<1000 { items.overrideLocalContent(with: index) }
            gate.signal()
            queue.sync {}
            queue.sync {}
            let delivered = seen.withLock { $0 }
            #expect(delivered.first == .observerAdded)
            #expect(delivered.count <= 3, "1000 overrides while busy coalesce to the latest: \(delivered.count)")
            #expect(items.typedContent(as: Int.self) == 999)

            let stops = LockedValue(0)
            let log = PolicyObserver(seen: seen, stops: stops)
            items.addObserver(log, owner: owner, delivery: .deliverOn(.queue(queue)))
            await items.removeObservers(ownedBy: owner)
            seen.withLock { $0.removeAll() }
            // A witness on the same queue: once it has the override, anything still meant for the removed observer
            // was queued before it, and has run too.
            let witness = Owner()
            let witnessed = LockedValue(false)
            items.addObserver(owner: witness, delivery: .deliverOn(.queue(queue))) { resource, event in
                if case .newData = event, resource.typedContent(as: Int.self) == -1 { witnessed.withLock { $0 = true } }
            }
            items.overrideLocalContent(with: -1)
            try await eventually { witnessed.withLock { $0 } }
            queue.sync {}
            #expect(seen.withLock { $0 }.isEmpty, "nothing after removeObservers returned")
            withExtendedLifetime(witness) {}
            #expect(stops.withLock { $0 } == 1)
        }
    }

    @Test("An observer passed as its own owner is self-owned, and keeps its delivery policy")
    func selfOwnedThroughOwnerForm() async {
        await withFixture { fixture in
            let items = fixture.service.resource("/items")
            let key = DispatchSpecificKey<String>()
            let queue = DispatchQueue(label: "observer")
            queue.setSpecific(key: key, value: "observer queue")
            var observer: QueueObserver? = QueueObserver(key: key)
            fixture.leaks.track(observer!, "observer owning itself")
            items.addObserver(observer!, owner: observer!, delivery: .deliverOn(.queue(queue)))
            items.overrideLocalContent(with: "a")
            queue.sync {}
            queue.sync {}
            #expect(observer?.queues.withLock { $0 } == ["observer queue", "observer queue"])
            observer = nil
            #expect(!items.hasObservers, "held weakly")
        }
    }

    @Test("A resource with observers is never evicted; an unobserved, unreferenced one only at a flush")
    func retention() async {
        await withFixture { fixture in
            let service = fixture.service
            let owner = Owner()
            weak var observed: Resource?
            weak var unobserved: Resource?
            do {
                let resource = service.resource("/observed")
                resource.addObserver(owner: owner) { _, _ in }
                observed = resource
                unobserved = service.resource("/unobserved")
            }
            #expect(observed != nil && unobserved != nil, "held by the cache until a flush")
            service.flushUnused()
            #expect(observed != nil)
            #expect(unobserved == nil)
            let kept = service.resource("/kept")
            service.flushUnused()
            #expect(service.resource("/kept") === kept, "referenced from outside: survives and stays canonical")
            service.resource("/observed").removeObservers(ownedBy: owner)
            service.flushUnused()
            #expect(observed == nil)
        }
    }

    @Test("The count limit flushes unused resources before creating more")
    func countLimit() async {
        await withFixture(cacheCountLimit: 100) { fixture in
            let service = fixture.service
            let kept = (0..<10).map { service.resource("/kept/\($0)") }
            for index in 0..<1000 { _ = service.resource("/churn/\(index)") }
            #expect(service.cachedResourceCount <= 100)
            #expect(kept.allSatisfy { service.resource(absoluteURL: $0.urlString) === $0 })
        }
    }
}

final class PolicyObserver: ResourceObserver {
    let seen: LockedValue<[ResourceEvent]>
    let stops: LockedValue<Int>

    init(seen: LockedValue<[ResourceEvent]>, stops: LockedValue<Int>) {
        self.seen = seen
        self.stops = stops
    }

    func resourceChanged(_ resource: Resource, event: ResourceEvent) {
        seen.withLock { $0.append(event) }
    }

    func stoppedObserving(resource: Resource) {
        stops.withLock { $0 += 1 }
    }
}

@Suite("Service lifetime", .leakChecked)
struct ServiceLifetimeTests {
    @Test("A dropped service is freed at once with every resource nobody references — observed or not, no flush")
    func droppedService() {
        let leaks = LeakTracker()
        let owner = Owner()
        var kept: Resource?
        do {
            let service = leaks.track(Service(baseURL: base, transport: InMemoryTransport()), "service")
            for index in 0..<50 { leaks.track(service.resource("/items/\(index)"), "resource \(index)") }
            service.resource("/observed").addObserver(owner: owner) { _, _ in }
            leaks.track(service.resource("/observed"), "observed resource")
            kept = service.resource("/kept")
        }
        #expect(leaks.survivors.isEmpty, "still alive: \(leaks.survivors)")

        // A resource still referenced keeps working, and gives a service face whose lookups stay canonical.
        let service = kept!.service
        #expect(service.resource("/kept") === kept)
        #expect(kept!.child("x") === service.resource("/kept/x"))
        withExtendedLifetime(owner) {}
    }

    @Test("The suite leak check sees each service and resource a test makes, by URL")
    func creationsAreTracked() {
        let tracker = LeakTracker()
        tracker.trackingCreations {
            let service = Service(baseURL: base, transport: InMemoryTransport())
            let resource = service.resource("/items")
            #expect(tracker.survivors == ["service \(base)", "resource \(base)/items"])
            withExtendedLifetime((service, resource)) {}
        }
        #expect(tracker.survivors.isEmpty)
    }
}

final class QueueObserver: ResourceObserver {
    let key: DispatchSpecificKey<String>
    let queues = LockedValue<[String?]>([])

    init(key: DispatchSpecificKey<String>) {
        self.key = key
    }

    func resourceChanged(_ resource: Resource, event: ResourceEvent) {
        let queue = DispatchQueue.getSpecific(key: key)
        queues.withLock { $0.append(queue) }
    }
}
