import Foundation
import LiveQueryKit
import MirrorKit
import PostgresAdapter
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits
import TransportKit

/// Mirrors past one machine: two stores on one schema stand for two instances. A refresh by one is seen by the
/// other's live queries; two refreshes of one mirror leave the later response, by the resource's timestamp.
@Suite(
    "PostgreSQL: a mirror refreshed by one instance is seen by every instance", PostgresTestServer.required,
    .needsProcessorTime, .timeLimit(minutes: 2))
struct PostgresMirrorTests {
    /// An instance: a service on a scripted transport and a clock at `now`, and a store on the shared schema.
    struct Instance {
        let clock: ManualTimeSource
        let transport: InMemoryTransport
        let service: Service
        let store: Store

        init(_ documents: PostgresDocumentStore, now: TimeInterval) {
            clock = ManualTimeSource(now: Date(timeIntervalSince1970: now))
            transport = InMemoryTransport(timeSource: clock)
            service = Service(baseURL: "https://api.test", transport: transport, timeSource: clock)
            store = Store(documents)
        }

        /// Loads `/items` answered with `names` (ids a0, a1, …) and waits until `mirror` has written it.
        func refresh(_ names: [String], mirror: ResourceMirror) async throws {
            let json =
                "["
                + names.enumerated().map { #"{"id":"a\#($0.offset)","store_id":"abc","name":"\#($0.element)"}"# }
                .joined(separator: ",") + "]"
            let before = mirror.completedWrites
            transport.enqueue(.get, "https://api.test/items", .json(json))
            _ = await service.resource("/items").load().outcome
            try await eventually { mirror.completedWrites > before }
            #expect(mirror.lastError == nil, "\(String(describing: mirror.lastError))")
        }
    }

    @Test("One instance's refresh reaches the other's live query; the later response wins, whoever commits last")
    func twoInstances() async throws {
        let configuration = try PostgresTestServer.freshConfiguration()
        let second = try PostgresDocumentStore(configuration: configuration)
        try await PostgresTestServer.withStore(configuration) { first throws in
            try await PostgresTestServer.running(second) { second throws in
                let early = Instance(first, now: 1_000)
                let late = Instance(second, now: 2_000)
                let earlyMirror = try early.service.resource("/items").mirror(
                    into: early.store.collection("items"), id: "id", scope: "store_id == 'abc'", name: "items",
                    loadingIfNeeded: false)
                let lateMirror = try late.service.resource("/items").mirror(
                    into: late.store.collection("items"), id: "id", scope: "store_id == 'abc'", name: "items",
                    loadingIfNeeded: false)
                let seen = LockedValue<[String]>([])
                let liveQuery = try early.store.collection("items").findAll().sort("_id").observeLocal {
                    documents, _ in
                    seen.withLock { $0 = documents.compactMap { $0.string("name") } }
                }

                // The later instance's response is newer: the earlier instance's live query shows it.
                try await late.refresh(["Pear", "Fig"], mirror: lateMirror)
                try await eventually { seen.withLock { $0 } == ["Pear", "Fig"] }

                // The earlier instance answers with older data, and commits last: it is not written.
                try await early.refresh(["Stale pear"], mirror: earlyMirror)
                await early.store.waitForLiveQueries()
                #expect(seen.withLock { $0 } == ["Pear", "Fig"])
                let state = try await earlyMirror.state.exec().flatMap(MirrorState.init)
                #expect(state?.syncedAt == Date(timeIntervalSince1970: 2_000))

                // Once its clock is past the other's, its response is the later one.
                early.clock.advance(by: .seconds(1_500))
                try await early.refresh(["Kiwi"], mirror: earlyMirror)
                try await eventually { seen.withLock { $0 } == ["Kiwi"] }

                // Both at once, five times, each time one or the other's clock ahead: the later response is what
                // stays, whichever transaction commits last.
                for round in 0..<5 {
                    let base = 10_000.0 + Double(round) * 1_000
                    let (earlyTime, lateTime) = round % 2 == 0 ? (base + 500, base) : (base, base + 500)
                    early.clock.advance(by: .seconds(earlyTime - early.clock.now.timeIntervalSince1970))
                    late.clock.advance(by: .seconds(lateTime - late.clock.now.timeIntervalSince1970))
                    let earlyNames = ["Early \(round)"]
                    let lateNames = ["Late \(round)"]
                    async let one: Void = early.refresh(earlyNames, mirror: earlyMirror)
                    async let two: Void = late.refresh(lateNames, mirror: lateMirror)
                    _ = try await (one, two)
                    let winner = early.clock.now > late.clock.now ? earlyNames : lateNames
                    try await eventually { seen.withLock { $0 } == winner }
                    let stored = try await early.store.collection("items").findAll().exec().compactMap {
                        $0.string("name")
                    }
                    #expect(stored == winner, "round \(round)")
                }
                liveQuery.stop()
                earlyMirror.stop()
                lateMirror.stop()
            }
        }
    }
}
