import DocumentStoreKit
import Foundation
import SQLiteAdapter
import Testing
import TetherTesting
import TetherTestingTraits
import TransportConformance

/// Restarts in real separate processes, against a loopback HTTP server.
@Suite(
    "Restarts, in real separate processes", .serialized, .needsProcessorTime, .timeLimit(minutes: 2), .leakChecked)
struct RestartTests {
    @Test("A restart shows the cached data at once and revalidates with one conditional request (304)")
    func restart() async throws {
        let endpoints = ConformanceEndpoints()
        try await LoopbackHTTPServer.with(endpoints: endpoints) { server in
            try await TemporaryDirectory.with { directory in
                let cache = directory.file("cache.sqlite")
                let url = server.url("/etag/v1").absoluteString
                let first = try await ProbeProcess.run(["cache-load", cache, url], in: directory)
                #expect(first.status == 0, "\(first)")
                #expect(first.lines == ["loaded \(url) version v1"])
                #expect(endpoints.recorder.requests(to: "/etag/v1") == 1)

                // Stale (expiration 0 s): the cached data first, then one conditional request answered 304.
                let second = try await ProbeProcess.run(["cache-show", cache, "0", url], in: directory)
                #expect(second.status == 0, "\(second)")
                let events = second.lines.filter { $0.hasPrefix("event ") }
                #expect(events.first == "event observerAdded -" || events.first == "event newData(cache) version v1")
                let cacheIndex = try #require(
                    events.firstIndex(of: "event newData(cache) version v1"), "\(second.lines)")
                let requestedIndex = try #require(
                    events.firstIndex { $0.hasPrefix("event requested") }, "\(second.lines)")
                #expect(cacheIndex < requestedIndex, "the cached data must show before the request: \(events)")
                #expect(events.contains("event notModified version v1"), "\(events)")
                #expect(endpoints.recorder.requests(to: "/etag/v1") == 2)

                // Fresh (expiration 1 h): the cached data, and no request at all.
                let third = try await ProbeProcess.run(["cache-show", cache, "3600", url], in: directory)
                #expect(third.status == 0, "\(third)")
                #expect(third.lines.contains("event newData(cache) version v1"), "\(third.lines)")
                #expect(!third.lines.contains { $0.hasPrefix("event requested") }, "\(third.lines)")
                #expect(endpoints.recorder.requests(to: "/etag/v1") == 2)
            }
        }
    }

    @Test(
        "SIGKILL at any point of the outbox's life, 30 times: no acknowledged mutation lost, none applied under two keys"
    )
    func outboxKills() async throws {
        let endpoints = ConformanceEndpoints()
        try await LoopbackHTTPServer.with(endpoints: endpoints) { server in
            try await TemporaryDirectory.with { directory in
                let outbox = directory.file("outbox.sqlite")
                let base = server.url("").absoluteString
                var acknowledged: [String] = []
                for run in 0..<30 {
                    let child = try ProbeProcess(["outbox-loop", outbox, base, "\(run)"], in: directory)
                    // Killed after 1 to 13 acknowledgements — before a send, or during one — or, every other run,
                    // as soon as the server has applied one more change: before the outbox heard of it.
                    let wanted = 1 + (run * 7) % 13
                    try await eventually { child.lines.count { $0.hasPrefix("ack ") } >= wanted }
                    if run % 2 == 1 {
                        let received = Self.received(endpoints)
                        try await eventually { Self.received(endpoints) > received }
                    }
                    kill(child.process.processIdentifier, SIGKILL)
                    let outcome = await child.finish()
                    #expect(outcome.status == SIGKILL && outcome.killedAtDeadline == nil, "\(outcome)")
                    acknowledged += outcome.lines.filter { $0.hasPrefix("ack ") }.map { String($0.dropFirst(4)) }
                }
                let drain = try await ProbeProcess.run(["outbox-drain", outbox, base], in: directory)
                #expect(drain.status == 0, "\(drain)")
                #expect(drain.lines.last?.hasSuffix("left 0") == true, "\(drain)")
                let changes = endpoints.recorder.changes(to: "a") + endpoints.recorder.changes(to: "b")
                let applied = changes.map { String(decoding: $0.body, as: UTF8.self) }
                let lost = Set(acknowledged).subtracting(applied)
                #expect(lost.isEmpty, "acknowledged and never applied: \(lost.sorted())")
                #expect(applied.count == Set(applied).count, "a change applied under two keys: \(applied)")
                #expect(acknowledged.count >= 30)
                let resent = changes.filter { $0.deliveries > 1 }.count
                print(
                    "outbox kills: \(acknowledged.count) acknowledged, \(changes.count) applied, \(resent) resent under their key"
                )
            }
        }
    }

    /// The requests `/idempotent/a` and `/b` have received, repeats included.
    static func received(_ endpoints: ConformanceEndpoints) -> Int {
        (endpoints.recorder.changes(to: "a") + endpoints.recorder.changes(to: "b")).reduce(0) { $0 + $1.deliveries }
    }
}
