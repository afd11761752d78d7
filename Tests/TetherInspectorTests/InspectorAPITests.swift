import Foundation
import LiveQueryKit
import MemoryPressureKit
import MutationOutboxKit
import OwnershipKit
import ResourceKit
import Testing
import TetherClock
import TetherInspector
import TetherTesting
import TetherTestingTraits
import TransportKit

/// `GET /api/v1/inspection` against the scripted scenario: the exact figures, as a client decodes them.
@Suite("Inspector: the JSON API", .timeLimit(minutes: 1))
struct InspectorAPITests {
    @Test("Resources: observed, cached, referenced elsewhere, what a flush releases, data, observers and owners")
    func resources() async throws {
        let scenario = try await InspectorScenario()
        let document = try await scenario.withInspector { _, port in
            let (status, body) = try await InspectorScenario.get(port, "/api/v1/inspection")
            #expect(status == 200)
            return try JSONDecoder().decode(InspectionDocument.self, from: body)
        }
        #expect(document.version == 1)
        let resources = try #require(document.services.first { $0.name == "api" }).service.resources
        let base = InspectorScenario.base
        #expect(resources.map(\.url) == ["/feed", "/kept", "/profile", "/unused"].map { base + $0 })
        let byPath = Dictionary(uniqueKeysWithValues: resources.map { ($0.url.dropFirst(base.count), $0) })

        let profile = try #require(byPath["/profile"])
        #expect(profile.isObserved && profile.isCached && !profile.wouldBeReleasedByFlush)
        #expect(profile.data?.bytes == 5)
        #expect(profile.data?.etag == "\"v1\"")
        #expect(profile.data?.ageSeconds == 5)
        #expect(profile.data?.isFresh == true)
        #expect(profile.loadsInFlight == 0 && profile.lastError == nil)
        #expect(profile.observers.map(\.flavour) == ["self-owned", "closure"])
        #expect(profile.observers.map(\.observerType) == ["ProfileScreen", "closure"])
        #expect(profile.observers[1].owners.map(\.type) == ["ProfileScreen"])
        #expect(profile.observers.allSatisfy { $0.isObserving })
        #expect(profile.observers[0].delivery == nil, "delivered directly: no lane")
        #expect(profile.observers.map(\.policy) == ["direct", "ExecutorDeliveryPolicy"])
        #expect((profile.observers[1].delivery?.delivered ?? 0) >= 1, "the closure's lane delivered its events")

        let feed = try #require(byPath["/feed"])
        #expect(!feed.isObserved && feed.wouldBeReleasedByFlush)
        #expect(feed.observers.map(\.owners) == [[.init(type: "ProfileScreen", isAlive: false)]])
        #expect(feed.observers.map(\.isObserving) == [false])
        #expect(feed.observers.map(\.flavour) == ["closure"])

        let kept = try #require(byPath["/kept"])
        #expect(!kept.isObserved && kept.isReferencedElsewhere && !kept.wouldBeReleasedByFlush)
        let unused = try #require(byPath["/unused"])
        #expect(!unused.isObserved && !unused.isReferencedElsewhere && unused.wouldBeReleasedByFlush)
        #expect(document.keptFromOutside == [base + "/kept"])
        withExtendedLifetime(scenario) {}
    }

    @Test("Live queries: owners, the busy observer's waiting result and how far behind it is; owners by type")
    func liveQueries() async throws {
        let scenario = try await InspectorScenario()
        let (first, document) = try await scenario.withInspector { inspector, _ in
            let first = inspector.inspect()
            scenario.clock.advance(by: .seconds(3))
            return (first, inspector.inspect())
        }
        let store = try #require(document.stores.first { $0.name == "items" }).store
        #expect(store.lastCommit == 5)
        #expect(store.statistics.observers == 2)
        #expect(store.liveQueries.map(\.query) == ["group == 'a'", InspectorScenario.hostileQuery])
        let group = store.liveQueries[0]
        #expect(group.collection == "items" && group.documents == 5 && group.commit == 5)
        #expect(group.compiled == "group == \"a\"")
        let observer = try #require(group.observers.first)
        #expect(observer.kind == "handler")
        #expect(observer.owners == [.init(type: "ProfileScreen", isAlive: true)])
        #expect(observer.isBusy)
        // Five {"_id":"dN","group":"a"}, 24 bytes each; published when the clock read 1,005 s, inspected at 1,008 s.
        #expect(observer.waiting == WaitingResult(documents: 5, commit: 5, bytes: 120, ageSeconds: 3))
        #expect(observer.id > 0)
        #expect(observer.deliveredCommit == 3)
        #expect(observer.commitsBehind == 2)
        #expect(observer.delivery.delivered == 1)
        #expect(observer.delivery.heldHighWater == 2, "the waiting result is staged in the observer's lane")
        #expect(store.liveQueries[1].observers.map(\.owners) == [[.init(type: "LiveQuery", isAlive: true)]])

        // Screen 0 observes /profile itself and owns the live query; screen 1 owns /profile's closure; screen 2 is
        // gone.
        #expect(document.owners.map(\.type) == ["ProfileScreen", "LiveQuery"])
        #expect(document.owners.map(\.observations) == [3, 1])
        // Ages count from the inspector's first look: nothing at the first, the clock's 3 s at the second.
        #expect(first.owners.map(\.oldestSeconds) == [0, 0])
        #expect(document.owners.map(\.oldestSeconds) == [3, 3])
        withExtendedLifetime(scenario) {}
    }

    @Test("Memory pressure: how many events, what they released, and the last one's source, level, reason and age")
    func memoryPressure() async throws {
        let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))
        let service = Service(
            baseURL: InspectorScenario.base, transport: InMemoryTransport(timeSource: clock), timeSource: clock)
        let inspector = try Inspector(timeSource: clock)
        inspector.watch(service, named: "api")
        let before = inspector.inspect().services[0].service.memoryPressure
        #expect(before.events == 0 && before.released == 0 && before.last == nil)

        let source = ManualMemoryPressureSource()
        let monitor = service.memoryPressureMonitor(source: source)
        let running = Task { await monitor.run() }
        try await eventually { source.watcherCount == 1 }
        // Unobserved and referenced by nothing but the cache: each flush releases what was made before it.
        _ = service.resource("/a")
        _ = service.resource("/b")
        source.signal(.critical, reason: "resident 900 MB > limit 800 MB")
        clock.advance(by: .seconds(4))
        _ = service.resource("/c")
        source.signal(.warning)
        clock.advance(by: .seconds(2))

        let pressure = inspector.inspect().services[0].service.memoryPressure
        #expect(pressure.events == 2 && pressure.released == 3)
        let last = try #require(pressure.last)
        #expect(last.source == "manual" && last.level == "warning" && last.reason == "signalled by hand")
        #expect(last.released == 1 && last.ageSeconds == 2)
        running.cancel()
        await running.value
    }

    @Test("Mutations: those pending, with their state and age, and the durable ones refused, with why")
    func mutations() async throws {
        let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))
        let transport = InMemoryTransport(timeSource: clock)
        transport.route(.put, InspectorScenario.base + "/a", reply: .failure(.connectionRefused))
        transport.route(.put, InspectorScenario.base + "/b", reply: .text("no", status: 422))
        let service = Service(baseURL: InspectorScenario.base, transport: transport, timeSource: clock)
        service.mutationConfiguration.outbox = InMemoryMutationOutbox()
        let inspector = try Inspector(timeSource: clock)
        inspector.watch(service, named: "api")

        // The refusal first: an answer from the server would end a's wait for its retry at once.
        let refused = service.resource("/b").mutate(
            .put, text: "b", headers: ["Idempotency-Key": "k-b"], durable: true)
        _ = await refused.outcome
        let waiting = service.resource("/a").mutate(
            .put, text: "a", headers: ["Idempotency-Key": "k-a"], durable: true)
        #expect(await clock.waitForSleepers(1), "a waits to be tried again")
        clock.advance(by: .milliseconds(500))
        let mutations = inspector.inspect().services[0].service.mutations
        #expect(mutations.pending.map(\.key) == ["k-a"])
        #expect(mutations.pending.first?.state == "retrying after 1 failure")
        #expect(mutations.pending.first?.ageSeconds == 0.5 && mutations.pending.first?.isDurable == true)
        #expect(mutations.failed.map(\.key) == ["k-b"])
        #expect(mutations.failed.first?.state.contains("422") == true, "\(mutations.failed)")
        waiting.cancel()
        #expect(inspector.inspect().services[0].service.mutations.pending.isEmpty)
    }

    @Test("The page and its files are served with a policy that runs only the page's own script")
    func page() async throws {
        let scenario = try await InspectorScenario()
        try await scenario.withInspector { _, port in
            for path in ["/", "/inspector.js", "/inspector.css"] {
                let (status, body) = try await InspectorScenario.get(port, path)
                #expect(status == 200, "\(path)")
                #expect(!body.isEmpty, "\(path)")
            }
            let missing = try await InspectorScenario.get(port, "/nothing")
            #expect(missing.status == 404)
        }
    }
}
