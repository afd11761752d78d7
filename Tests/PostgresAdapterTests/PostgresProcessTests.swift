import DocumentStoreKit
import Foundation
import PostgresAdapter
import Testing
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Real processes sharing a schema only through the server: `tether-postgres-probe`, built beside this bundle.
@Suite(
    "PostgreSQL: processes that share only the server", PostgresTestServer.required, .needsProcessorTime,
    .timeLimit(minutes: 2))
struct PostgresProcessTests {
    /// How long a probe may run once the test waits for it: inside the suite's 2 minutes, above the 60 s default
    /// (the slow consumer's test took up to 94 s in CI, counting its wait for a turn).
    static let deadline = Duration.seconds(100)

    static func probe(_ arguments: [String], in directory: TemporaryDirectory) throws -> ProbeProcess {
        try ProbeProcess(executable: "tether-postgres-probe", arguments, in: directory)
    }

    @Test(
        "Three processes: two write, one observes a live query — every result it delivers is the query over the state at the commit it carries, and it ends on the final state"
    )
    func threeProcesses() async throws {
        let url = try #require(PostgresTestServer.url)
        let configuration = try PostgresTestServer.freshConfiguration()
        let schema = configuration.schema
        let perWriter = 40
        // The writers' commits, then this test's own: one that changes the observed result, so that the observer
        // has a last result to wait for (a commit that changes nothing it shows delivers nothing).
        let last = UInt64(2 * perWriter + 1)
        try await TemporaryDirectory.with { directory in
            let observer = try Self.probe(["observe", url, schema, "\(last)"], in: directory)
            defer { if observer.process.isRunning { kill(observer.process.processIdentifier, SIGKILL) } }
            try await eventually { observer.lines.contains("ready") }
            let writers = try ["p", "q"].map { prefix in
                try Self.probe(["write", url, schema, "\(perWriter)", prefix], in: directory)
            }
            // Which document each commit inserted, as the writers saw their commits return.
            var inserted: [UInt64: (id: String, group: String)] = [:]
            for writer in writers {
                let written = await writer.finish(within: Self.deadline)
                #expect(written.status == 0, "\(written)")
                for line in written.lines where line.hasPrefix("committed ") {
                    let parts = line.split(separator: " ").map(String.init)
                    inserted[try #require(UInt64(parts[1]))] = (parts[2], parts[3])
                }
            }
            #expect(inserted.keys.sorted() == Array(1...UInt64(2 * perWriter)), "one commit each, no gap")
            try await PostgresTestServer.running(try PostgresDocumentStore(configuration: configuration)) { store in
                try await store.insert(["_id": "z", "group": "a"], into: "items")
            }
            inserted[last] = ("z", "a")
            try await eventually { observer.lines.contains { $0.hasPrefix("result \(last) ") } }
            let observed = await observer.finish(within: Self.deadline)
            #expect(observed.status == 0, "\(observed)")
            let lines = observed.lines
            let results = lines.filter { $0.hasPrefix("result ") }.map { line in
                let parts = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                return (commit: UInt64(parts[1]) ?? 0, ids: parts[2])
            }
            #expect(results.count >= 2, "\(lines)")
            for result in results {
                let expected = inserted.filter { $0.key <= result.commit && $0.value.group == "a" }.map(\.value.id)
                #expect(result.ids == expected.sorted().joined(separator: ","), "at commit \(result.commit)")
            }
            #expect(results.last?.commit == last, "it ends on the final state")
        }
        try await PostgresTestServer.dropSchema(of: configuration)
    }

    @Test(
        "A slow consumer in another process than the writer holds at most 2 results, takes far fewer than the commits, and ends on the final state"
    )
    func slowConsumerElsewhere() async throws {
        let url = try #require(PostgresTestServer.url)
        let configuration = try PostgresTestServer.freshConfiguration()
        // 300 inserts, one commit each; every third in group "b", so the last (index 299) changes the result.
        let (count, lag) = (300, 10)
        try await TemporaryDirectory.with { directory in
            let observer = try Self.probe(
                ["observe-slow", url, configuration.schema, "\(count)", "\(lag)"], in: directory)
            defer { if observer.process.isRunning { kill(observer.process.processIdentifier, SIGKILL) } }
            try await eventually { observer.lines.contains("ready") }
            let writer = try Self.probe(["write", url, configuration.schema, "\(count)", "p"], in: directory)
            let written = await writer.finish(within: Self.deadline)
            #expect(written.status == 0, "\(written)")
            let observed = await observer.finish(within: Self.deadline)
            #expect(observed.status == 0, "\(observed)")
            let lines = observed.lines
            let numbers = { (prefix: String) in
                lines.first { $0.hasPrefix(prefix + " ") }.map {
                    $0.split(separator: " ").dropFirst().compactMap { Int($0) }
                }
                    ?? []
            }
            let results = lines.filter { $0.hasPrefix("result ") }
            #expect(results.last == "result \(count) \(2 * count / 3)", "it ends on the final state: \(results)")
            let statistics = numbers("statistics")  // submitted, delivered, coalesced, held high-water
            let engine = numbers("engine")  // evaluations, incremental updates, deferrals
            try #require(statistics.count == 4 && engine.count == 3, "\(lines)")
            #expect(statistics[3] <= 2, "never more than one result waiting behind the one handled: \(statistics)")
            #expect(
                statistics[1] <= count / lag + 5 && results.count == statistics[1],
                "one result per \(lag) commits or so, not one per commit: \(statistics)")
            #expect(engine[2] > 0, "the engine held changes back while the consumer was busy: \(engine)")
        }
        try await PostgresTestServer.dropSchema(of: configuration)
    }

    @Test("A writer killed with SIGKILL inside a transaction leaves nothing of it; the others stay whole; writes go on")
    func killedWriter() async throws {
        let url = try #require(PostgresTestServer.url)
        let configuration = try PostgresTestServer.freshConfiguration()
        try await TemporaryDirectory.with { directory in
            let writer = try Self.probe(["write-batches", url, configuration.schema, "7"], in: directory)
            try await eventually { writer.lines.contains("holding 7") }
            kill(writer.process.processIdentifier, SIGKILL)
            _ = await writer.finish(within: Self.deadline)
            let committed = writer.lines.filter { $0.hasPrefix("committed ") }.count
            #expect(committed == 7, "\(writer.lines)")
            try await PostgresTestServer.withStore(configuration) { store throws in
                // The killed transaction held the commit counter's lock: the server let it go with the connection.
                try await store.upsert(["_id": "after", "batch": -1], into: "batches")
                let documents = try await store.read {
                    try $0.documents(matching: DocumentQuery(collection: "batches"))
                }
                var perBatch: [Int: Int] = [:]
                for document in documents {
                    if case .number(let batch)? = document.body["batch"] { perBatch[Int(batch), default: 0] += 1 }
                }
                #expect(perBatch == Dictionary(uniqueKeysWithValues: (0..<7).map { ($0, 20) } + [(-1, 1)]))
                #expect(
                    try await store.read { try $0.commitNumber() } == 8,
                    "seven batches and the write after: the killed transaction took no commit number")
            }
        }
    }
}
