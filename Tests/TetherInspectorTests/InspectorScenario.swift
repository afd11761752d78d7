import Foundation
import LiveQueryKit
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherInspector
import TetherJSON
import TetherTesting
import TransportKit
import URLSessionAdapter

/// A screen-like owner, as an app has them.
final class ProfileScreen: ResourceObserver, Sendable {
    func resourceChanged(_ resource: Resource, event: ResourceEvent) {}
}

/// The scripted scenario the inspector is checked against, with its exact figures:
/// - `/profile`: loaded (5 bytes, ETag `"v1"`, 5 s old, fresh); observed by screen 0 (self-owned) and by a closure
///   that screen 1 owns, delivered through a lane;
/// - `/feed`: a closure whose owner, screen 2, has died (not observing, its owner gone);
/// - `/kept`: unobserved, referenced by the test (survives a flush); `/unused`: unobserved, held only by the cache
///   (the next flush releases it);
/// - a store of 5 documents whose live query `group == 'a'` screen 0 owns: its observer is busy with the result at
///   commit 3 and a result of 5 documents (120 bytes as JSON) at commit 5, published at the clock's 1,005 s, waits
///   for its signal (2 commits behind);
/// - a live query whose text holds `<script>`, owned by its handle.
final class InspectorScenario: Sendable {
    static let base = "https://api.example.com/v1"
    static let hostileQuery = "name == '<script>document.title=\"pwned\"</script>'"

    let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))
    let service: Service
    let store: Store
    let screens = LockedValue<[ProfileScreen?]>([ProfileScreen(), ProfileScreen(), ProfileScreen()])
    let kept: Resource
    let liveQueries: [LiveQuery]
    let signal = LockedValue<SignalNext?>(nil)

    init() async throws {
        store = Store.inMemory(configuration: .init(timeSource: clock))
        let transport = InMemoryTransport(timeSource: clock)
        transport.route(.get, Self.base + "/profile", reply: .text("hello", headers: ["ETag": "\"v1\""]))
        service = Service(baseURL: Self.base, transport: transport, timeSource: clock)
        let screens = screens.withLock { $0.map { $0! } }

        let profile = service.resource("/profile")
        profile.addObserver(screens[0])
        profile.addObserver(owner: screens[1], delivery: .deliverOn(.serialQueue())) { _, _ in }
        _ = try await profile.loadedData()
        service.resource("/feed").addObserver(owner: screens[2]) { _, _ in }
        kept = service.resource("/kept")
        _ = service.resource("/unused")
        clock.advance(by: .seconds(5))

        let items = store.collection("items")
        for index in 0..<3 { try await items.upsert(["_id": .string("d\(index)"), "group": "a"]) }
        let signal = signal
        let busy = try items.find("group == 'a'").observeLocalWithNextSignal(owner: screens[0]) { _, _, next in
            signal.withLock { $0 = next }  // kept: the observer stays busy
        }
        let hostile = try items.find(Self.hostileQuery).observeLocal { _, _ in }
        liveQueries = [busy, hostile]
        try await eventually { signal.withLock { $0 != nil } }
        for index in 3..<5 { try await items.upsert(["_id": .string("d\(index)"), "group": "a"]) }
        await store.waitForLiveQueries()

        // Screen 2 goes: its observer of /feed is no longer observing (until a sweep settles it).
        self.screens.withLock { $0[2] = nil }
    }

    /// An inspector watching the scenario, running in `body`, at its bound port.
    func withInspector<T: Sendable>(
        _ configuration: InspectorConfiguration = InspectorConfiguration(),
        _ body: (Inspector, Int) async throws -> T
    ) async throws -> T {
        let inspector = try Inspector(configuration: configuration, timeSource: clock)
        inspector.watch(service, named: "api")
        inspector.watch(store, named: "items")
        let running = Task { try await inspector.run() }
        let outcome: Result<T, any Error>
        do {
            let port = try #require(await inspector.port())
            outcome = .success(try await body(inspector, port))
        } catch {
            outcome = .failure(error)
        }
        // Cancelled, it shuts down gracefully: wait for it to have closed.
        running.cancel()
        _ = await running.result
        return try outcome.get()
    }

    /// GETs `path` on the inspector: the status and body.
    static func get(
        _ port: Int, _ path: String, headers: [String: String] = [:]
    ) async throws -> (status: Int, body: Data) {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)\(path)"))
        let response = try await transport.send(
            TransportRequest(url: url, headers: HTTPHeaders(headers.map { ($0.key, $0.value) })))
        return (response.status, response.body)
    }

    /// Not `URLSession.shared.data(for:)`: FoundationNetworking makes its task on the calling thread, waiting for
    /// a queue every session in the process shares — one of Swift concurrency's threads, held as long as that queue
    /// is busy.
    static let transport = URLSessionTransport()
}
