import Foundation
import GRDB
import MutationOutboxKit
import PersistenceKit
import ResourceKit
import SQLiteAdapter
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite("SQLiteMutationOutbox", .timeLimit(minutes: 1), .leakChecked)
struct SQLiteMutationOutboxTests {
    @Test("Conformance", arguments: MutationOutboxConformance.checks)
    func conformance(_ check: MutationOutboxCheck) async throws {
        try await TemporaryDirectory.with { directory in
            try await check.run(on: SQLiteMutationOutbox(path: directory.file("outbox.sqlite")))
        }
    }

    @Test(
        "After a restart a new service on the same file shows the pending layers again and sends each once, in order; another outbox object takes nothing its first holder still holds"
    )
    func restart() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("outbox.sqlite")
            // The first process: the server cannot be reached; its mutations wait in the outbox.
            let offline = InMemoryTransport()
            offline.route(nil, "https://api.test/items", reply: .failure(.connectionRefused))
            let firstOutbox = try SQLiteMutationOutbox(path: path)
            let first = Self.service(offline, outbox: firstOutbox)
            let list = first.resource("/items")
            let made = ["b", "c"].map { list.mutate(.post, text: $0, optimistic: .named("append"), durable: true) }
            #expect(list.text == ",b,c")
            let keys = try await first.pendingMutations().map(\.key)
            #expect(keys.count == 2)

            // While the first holds them, another outbox on the file takes none; closed, it lets go of them.
            #expect(try SQLiteMutationOutbox(path: path).takePending().isEmpty)
            try firstOutbox.close()

            // The second process, on the same file: the server is back, and answers each change after a second of
            // its clock, so that nothing is answered before the layers are looked at.
            let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))
            let online = InMemoryTransport(timeSource: clock)
            online.route(.get, "https://api.test/items", reply: .text("a"))
            online.route(.post, "https://api.test/items", reply: .text("created", delay: .seconds(1)))
            let second = Self.service(online, outbox: try SQLiteMutationOutbox(path: path))
            let items = second.resource("/items")
            let resumed = try second.resumeMutations()
            #expect(items.text == ",b,c", "the layers are shown before anything is sent")
            for request in resumed {
                #expect(await clock.waitForSleepers(1), "sent one at a time")
                clock.advance(by: .seconds(1))
                #expect(await request.outcome.error == nil)
            }
            let sent = online.requests.filter { $0.method == .post }
            #expect(sent.map { $0.headers["Idempotency-Key"] } == keys, "each once, in order, under its key")
            #expect(sent.map { String(decoding: $0.body ?? Data(), as: UTF8.self) } == ["b", "c"])
            #expect(try await second.pendingMutations().isEmpty)
            for mutation in made { mutation.cancel() }  // the first process ends
        }
    }

    @Test("An entry a newer version wrote is left in the file, with a warning; the others are sent")
    func newerFormatSkipped() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("outbox.sqlite")
            let outbox = try SQLiteMutationOutbox(path: path)
            _ = try outbox.enqueue(MutationOutboxConformance.entry("current"))
            do {
                let queue = try DatabaseQueue(path: path)
                try await queue.write { db in
                    try db.execute(
                        sql: """
                            INSERT INTO tether_outbox (key, lane, format, body, details)
                            VALUES ('future', 'x', 99, NULL, '{"something":"new"}')
                            """)
                }
                try queue.close()
            }
            #expect(try outbox.pendingEntries().map(\.key) == ["current"])
            let count = try await DatabaseQueue(path: path).read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM tether_outbox WHERE key = 'future'")
            }
            #expect(count == 1, "left where it is")
        }
    }

    @Test("A full disk: the mutation fails at once naming the file, nothing is written or shown; earlier entries stay")
    func diskFull() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("outbox.sqlite")
            let outbox = try SQLiteMutationOutbox(path: path)
            let transport = InMemoryTransport()
            transport.route(nil, "https://api.test/items", reply: .failure(.connectionRefused))
            let service = Self.service(transport, outbox: outbox)
            let items = service.resource("/items")
            let kept = items.mutate(.post, text: "small", durable: true)
            try outbox.limitSize(toPages: 8)
            let big = items.mutate(
                .post, text: String(repeating: "x", count: 200_000), optimistic: .named("append"), durable: true)
            let error = try #require(big.completedOutcome?.error)
            #expect(error.kind == .mutationNotQueued)
            let cause = try #require(error.cause as? PersistenceKit.PersistenceError)
            #expect(cause.kind == PersistenceKit.PersistenceError.Kind.diskFull, "\(cause)")
            #expect(cause.file == Optional(path))
            #expect(items.latestData == nil, "nothing shown")
            #expect(try outbox.pendingEntries().map { $0.body } == [Data("small".utf8)])
            #expect(transport.requests.allSatisfy { $0.body == Data("small".utf8) }, "nothing sent")
            kept.cancel()
        }
    }

    @Test("A file that is not an outbox is refused and left as it is")
    func foreignFileRefused() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("store.sqlite")
            try SQLiteDocumentStore(path: path).close()
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect {
                _ = try SQLiteMutationOutbox(path: path)
            } throws: { error in
                (error as? PersistenceKit.PersistenceError)?.kind == .foreignFile
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }

    static func service(_ transport: InMemoryTransport, outbox: SQLiteMutationOutbox) -> Service {
        let service = Service(baseURL: "https://api.test", transport: transport)
        service.mutationConfiguration.outbox = outbox
        service.mutationConfiguration.retryBackoff = .seconds(3600)
        service.defineOptimisticUpdate("append") { body in
            let added = String(decoding: body ?? Data(), as: UTF8.self)
            return .updating { (list: String?) in (list ?? "") + "," + added }
        }
        return service
    }
}
