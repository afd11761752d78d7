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
}
