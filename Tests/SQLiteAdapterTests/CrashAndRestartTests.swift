import DocumentStoreKit
import Foundation
import SQLiteAdapter
import Testing
import TetherTesting
import TetherTestingTraits
import TransportConformance

@Suite(
    "Restarts and crashes, in real separate processes", .serialized, .needsProcessorTime, .timeLimit(minutes: 2),
    .leakChecked)
struct CrashAndRestartTests {
    @Test("SIGKILL mid-write: the file opens intact and holds every commit the child reported done")
    func sigkill() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("store.sqlite")
            let child = try ProbeProcess(["write-loop", path], in: directory)
            try await eventually { child.lines.count >= 300 }
            kill(child.process.processIdentifier, SIGKILL)
            let outcome = await child.finish()
            #expect(outcome.status == SIGKILL && outcome.killedAtDeadline == nil, "\(outcome)")
            let lines = outcome.lines
            // Every "committed first last" line is a commit that returned before the kill.
            let reported = lines.compactMap { line -> Int? in
                let parts = line.split(separator: " ")
                return parts.count == 3 && parts[0] == "committed" ? Int(parts[2]) : nil
            }
            let lastReported = try #require(reported.max())
            let store = try SQLiteDocumentStore(path: path)
            #expect(try await store.integrityCheck() == ["ok"])
            let count = try await store.read { try $0.count(matching: DocumentQuery(collection: "items")) }
            #expect(
                count >= lastReported + 1, "the child reported \(lastReported + 1) documents committed; \(count) found")
            for index in stride(from: 0, through: lastReported, by: 7) {
                #expect(
                    try await store.document(id: "d\(index)", in: "items") != nil, "d\(index) was reported committed")
            }
            try store.close()
        }
    }

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
