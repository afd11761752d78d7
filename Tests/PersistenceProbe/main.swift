// A second process for SQLiteAdapterTests: what a restart or a crash looks like needs a process that really ends.
//
//   tether-persistence-probe write-loop <store.sqlite>
//       Upserts documents forever, one commit at a time (every tenth a batch of ten), printing
//       "committed <first> <last>" after each commit returns. Killed with SIGKILL by the test.
//   tether-persistence-probe write <store.sqlite> <count> <prefix>
//       Upserts documents <prefix>0 … <prefix><count-1>, one commit each, prints "done <last commit>" and exits.
//   tether-persistence-probe cache-load <cache.sqlite> <url>…
//       Loads each URL through a Service with a SQLite persistent cache, prints "loaded <url> <body>", flushes, exits.
//   tether-persistence-probe outbox-loop <outbox.sqlite> <base url> <run>
//       Resumes what the outbox holds, then makes durable POSTs to /idempotent/a and /idempotent/b for ever (eight
//       pending at most), printing "ack run<run>-<n>" as each mutate returns. Killed with SIGKILL by the test.
//   tether-persistence-probe outbox-drain <outbox.sqlite> <base url>
//       Resumes what the outbox holds, waits for every mutation to settle, prints "drained <count> left <pending>".
//   tether-persistence-probe cache-show <cache.sqlite> <expiration seconds> <url>
//       Observes the URL and prints each event with the text; calls loadIfNeeded once the cache has been read, and
//       exits when that load ends.
import DocumentStoreKit
import EntityCacheKit
import Foundation
import ResourceKit
import SQLiteAdapter
import TetherJSON
import TetherTesting
import TransportKit
import URLSessionAdapter

let arguments = CommandLine.arguments.dropFirst()
guard let mode = arguments.first else { ProbeOutput.fail("usage: tether-persistence-probe <mode> …") }

final class Owner: Sendable {}

/// Text as is, JSON as text.
@Sendable func describe(_ content: any Sendable) -> String {
    (content as? String) ?? (content as? JSONValue)?.jsonText ?? "\(type(of: content))"
}

do {
    switch mode {
    case "write-loop":
        guard arguments.count == 2 else { ProbeOutput.fail("usage: write-loop <store.sqlite>") }
        let store = try SQLiteDocumentStore(path: arguments[arguments.startIndex + 1])
        var next = 0
        while true {
            let first = next
            let count = next % 10 == 9 ? 10 : 1
            try await store.write { transaction in
                for index in first..<(first + count) {
                    try transaction.upsert(
                        [
                            "_id": .string("d\(index)"), "n": .number(Double(index)),
                            "pad": .string(String(repeating: "x", count: 200)),
                        ],
                        into: "items")
                }
            }
            next += count
            ProbeOutput.say("committed \(first) \(next - 1)")
        }
    case "write":
        guard arguments.count == 4, let count = Int(arguments[arguments.startIndex + 2]) else {
            ProbeOutput.fail("usage: write <store.sqlite> <count> <prefix>")
        }
        let store = try SQLiteDocumentStore(path: arguments[arguments.startIndex + 1])
        let prefix = arguments[arguments.startIndex + 3]
        for index in 0..<count {
            try await store.upsert(["_id": .string("\(prefix)\(index)"), "n": .number(Double(index))], into: "items")
        }
        ProbeOutput.say("done \(try await store.read { try $0.commitNumber() })")
        try store.close()
    case "outbox-loop", "outbox-drain":
        guard arguments.count >= 3 else { ProbeOutput.fail("usage: \(mode) <outbox.sqlite> <base url> [run]") }
        let outbox = try SQLiteMutationOutbox(path: arguments[arguments.startIndex + 1])
        let service = Service(baseURL: arguments[arguments.startIndex + 2], transport: URLSessionTransport())
        service.mutationConfiguration.outbox = outbox
        service.mutationConfiguration.retryBackoff = .milliseconds(50)
        let resumed = try service.resumeMutations()
        ProbeOutput.say("resumed \(resumed.count)")
        if mode == "outbox-drain" {
            for request in resumed {
                if let error = await request.outcome.error { ProbeOutput.say("failed \(error)") }
            }
            ProbeOutput.say("drained \(resumed.count) left \(try await service.pendingMutations().count)")
            break
        }
        let run = arguments[arguments.startIndex + 3]
        var outstanding: [Request] = []
        for index in 0... {
            let body = "run\(run)-\(index)"
            let mutation = service.resource(index % 2 == 0 ? "/idempotent/a" : "/idempotent/b")
                .mutate(.post, text: body, durable: true)
            if let error = mutation.completedOutcome?.error { ProbeOutput.fail("\(body) not queued: \(error)") }
            ProbeOutput.say("ack \(body)")
            outstanding.append(mutation)
            if outstanding.count >= 8 { _ = await outstanding.removeFirst().outcome }
        }
    case "cache-load":
        guard arguments.count >= 3 else { ProbeOutput.fail("usage: cache-load <cache.sqlite> <url>…") }
        let cache = try PersistentCache.sqlite(path: arguments[arguments.startIndex + 1])
        let service = Service(baseURL: nil as String?, transport: URLSessionTransport())
        service.configure { $0.persistentCache = cache }
        for url in arguments.dropFirst(2) {
            let entity = try await service.resource(absoluteURL: url).load().outcome.get()
            ProbeOutput.say("loaded \(url) \(describe(entity.content))")
        }
        await cache.flush()
    case "cache-show":
        guard arguments.count == 4, let seconds = Int(arguments[arguments.startIndex + 2]) else {
            ProbeOutput.fail("usage: cache-show <cache.sqlite> <expiration seconds> <url>")
        }
        let cache = try PersistentCache.sqlite(path: arguments[arguments.startIndex + 1])
        let service = Service(baseURL: nil as String?, transport: URLSessionTransport())
        service.configure {
            $0.persistentCache = cache
            $0.expirationTime = .seconds(seconds)
        }
        let resource = service.resource(absoluteURL: arguments[arguments.startIndex + 3])
        let owner = Owner()
        resource.addObserver(owner: owner) { resource, event in
            ProbeOutput.say("event \(event) \(resource.latestData.map { describe($0.content) } ?? "-")")
        }
        let outcome = await resource.loadIfNeeded()?.outcome
        ProbeOutput.say("load \(outcome.map { "\($0)" } ?? "none")")
        withExtendedLifetime(owner) {}
    default:
        ProbeOutput.fail("unknown mode \(mode)")
    }
} catch {
    ProbeOutput.fail("\(error)")
}
