import DeliveryKit
import Foundation
import Observation
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherObservation
import TetherTesting
import TetherTestingTraits
import TransportKit

/// `ResourceModel` over a scripted transport and a manual clock: its properties follow the resource, a tracking
/// closure runs once per change that shows, re-pointing moves the observer, and a released model leaves nothing.
@Suite("ResourceModel: a resource as Observation properties", .timeLimit(minutes: 1), .leakChecked)
struct ResourceModelTests {
    let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))
    let transport: InMemoryTransport
    let service: Service

    init() {
        transport = InMemoryTransport(timeSource: clock)
        service = Service(baseURL: "https://api.example.com", transport: transport, timeSource: clock)
    }

    @Test("A load sets content, isLoading and timestamp; one tracking closure runs once for it")
    func load() async throws {
        let resource = service.resource("/items")
        let model = ResourceModel<JSONValue>(resource, loadsOnAccess: false)
        #expect(model.content == nil)
        #expect(model.isLoading == false)
        let fired = Counter()
        withObservationTracking {
            _ = model.content
        } onChange: {
            fired.add()
        }

        transport.enqueue(.get, "https://api.example.com/items", .json(#"[{"id":1}]"#))
        _ = await resource.load().outcome
        try await eventually { model.content != nil }
        #expect(model.content == [["id": 1]])
        #expect(model.isLoading == false)
        #expect(model.timestamp == clock.now)
        #expect(model.isUpToDate)
        #expect(model.error == nil)
        #expect(fired.value == 1)
    }

    @Test("The first read of content loads the resource, once")
    func loadsOnAccess() async throws {
        transport.enqueue(.get, "https://api.example.com/items", .json("[1]"))
        let model = ResourceModel<JSONValue>(service.resource("/items"))
        #expect(transport.requestCount(to: "https://api.example.com/items") == 0)
        _ = model.content
        try await eventually { model.content == [1] }
        _ = model.content
        #expect(transport.requestCount(to: "https://api.example.com/items") == 1)
    }

    @Test("A failed load sets the error and keeps the content; new data clears it")
    func failure() async throws {
        let resource = service.resource("/items")
        let model = ResourceModel<JSONValue>(resource, loadsOnAccess: false)
        transport.enqueue(.get, "https://api.example.com/items", .json("[1]"))
        _ = await resource.load().outcome
        transport.enqueue(.get, "https://api.example.com/items", .status(500))
        _ = await resource.load().outcome
        try await eventually { model.error != nil }
        #expect(model.error?.kind == .httpStatus(500))
        #expect(model.content == [1])

        transport.enqueue(.get, "https://api.example.com/items", .json("[2]"))
        _ = await resource.load().outcome
        try await eventually { model.error == nil }
        #expect(model.content == [2])
    }

    @Test("A 304 moves the timestamp on the manual clock and leaves the content untouched")
    func notModified() async throws {
        let resource = service.resource("/items")
        let model = ResourceModel<JSONValue>(resource, loadsOnAccess: false)
        transport.enqueue(.get, "https://api.example.com/items", .json("[1]", headers: ["ETag": "\"v1\""]))
        _ = await resource.load().outcome
        try await eventually { model.content == [1] }
        let contentChanged = Counter()
        withObservationTracking {
            _ = model.content
        } onChange: {
            contentChanged.add()
        }
        let timestampChanged = Counter()
        withObservationTracking {
            _ = model.timestamp
        } onChange: {
            timestampChanged.add()
        }

        clock.advance(by: .seconds(60))
        transport.enqueue(.get, "https://api.example.com/items", .status(304))
        _ = await resource.load().outcome
        try await eventually { model.timestamp == clock.now }
        #expect(timestampChanged.value == 1)
        #expect(contentChanged.value == 0, "a 304 is not new content")
        #expect(model.content == [1])
    }

    @Test("Re-pointing removes the old observer at once and shows the new resource's state")
    func repoint() async throws {
        let (first, second) = (service.resource("/a"), service.resource("/b"))
        transport.enqueue(.get, "https://api.example.com/b", .json(#""b""#))
        _ = await second.load().outcome
        let model = ResourceModel<JSONValue>(first, loadsOnAccess: false)
        #expect(first.observerCount == 1)

        model.resource = second
        #expect(first.observerCount == 0)
        #expect(second.observerCount == 1)
        try await eventually { model.content == "b" }

        await model.show(nil)
        #expect(second.observerCount == 0)
        #expect(model.content == nil)
        #expect(model.timestamp == nil)
    }

    @Test("A released model leaves no observer, even with its load in flight")
    func release() async throws {
        let resource = service.resource("/items")
        transport.enqueue(.get, "https://api.example.com/items", .json("[1]", delay: .seconds(5)))
        weak var released: ResourceModel<JSONValue>?
        do {
            let model = ResourceModel<JSONValue>(resource)
            released = model
            _ = model.content  // starts the load, which waits for the clock
            #expect(resource.isLoading)
        }
        #expect(released == nil)
        #expect(!resource.hasObservers)
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        try await eventually { !resource.isLoading }
        #expect(resource.latestData != nil)
        #expect(resource.observerCount == 0)
    }
}

/// A count shared with a tracking closure.
final class Counter: Sendable {
    private let count = LockedValue(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

@Suite("ResourceModel with a delivery policy", .timeLimit(minutes: 1), .leakChecked)
struct ResourceModelDeliveryTests {
    @Test("Delivered on a queue of its own: content arrives, and a released model leaves no observer")
    func onQueue() async throws {
        let transport = InMemoryTransport()
        let service = Service(baseURL: "https://api.example.com", transport: transport)
        let resource = service.resource("/items")
        transport.enqueue(.get, "https://api.example.com/items", .json("[1]"))
        weak var released: ResourceModel<JSONValue>?
        do {
            let model = ResourceModel<JSONValue>(
                resource, loadsOnAccess: false, delivery: .deliverOn(.serialQueue(label: "model")))
            released = model
            _ = await resource.load().outcome
            try await eventually { model.content == [1] }
        }
        #expect(released == nil)
        #expect(resource.observerCount == 0)
    }
}
