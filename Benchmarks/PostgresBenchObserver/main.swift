// The other process of PostgresBenchmarks: live-query observers on a PostgresDocumentStore of their own, sharing
// only the server with the writer.
//
//   tether-postgres-bench-observer <url> <schema> <observers> <groups>
//       Observes `group == $args.group` sorted by `seq`, descending, limit 100, for `observers` observers over
//       `groups` distinct groups (g0, g1, …; observer i watches g(i % groups)). Prints "ready" once every observer
//       has its first result; then, for the observers of g0, "seen <newest seq> <monotonic µs>" at each handler
//       call. Reads commands from standard input:
//         report <commit>   waits until the live queries have caught up with <commit>, then prints
//                           "report <statements> <reads> <change-log reads> <evaluations> <incremental updates>
//                           <deliveries>" — the store's and the engine's counts so far.
//       Ends when standard input does.
import DocumentStoreKit
import Foundation
import LiveQueryKit
import PostgresAdapter
import TetherConcurrency
import TetherJSON

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bench-observer: \(message)\n".utf8))
    exit(2)
}

func nowMicroseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return time.tv_sec * 1_000_000 + time.tv_nsec / 1_000
}

/// Standard input's lines, read on a thread of their own (a blocking read has no place on Swift concurrency's).
func inputLines() -> AsyncStream<String> {
    let (lines, continuation) = AsyncStream<String>.makeStream()
    Thread {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
    }.start()
    return lines
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 4, let observerCount = Int(arguments[2]), let groups = Int(arguments[3]), groups > 0 else {
    fail("usage: tether-postgres-bench-observer <url> <schema> <observers> <groups>")
}

do {
    var configuration = try PostgresConfiguration(url: arguments[0])
    configuration.schema = arguments[1]
    configuration.poolSize = 4
    let documents = try PostgresDocumentStore(configuration: configuration)
    let running = Task { try await documents.run() }
    let store = Store(documents)
    let items = store.collection("items")
    let deliveries = LockedValue(0)
    let allStarted = OneShot<Void>()
    var liveQueries: [LiveQuery] = []
    for index in 0..<observerCount {
        let group = "g\(index % groups)"
        let reports = group == "g0"
        liveQueries.append(
            try items.find("group == $args.group", args: ["group": .string(group)]).sort("seq", direction: .descending)
                .limit(100)
                .observeLocal { documents, _ in
                    if deliveries.withLock({
                        $0 += 1
                        return $0
                    }) == observerCount {
                        _ = allStarted.fire()
                    }
                    guard reports else { return }
                    let newest = documents.reduce(-1) { max($0, $1.value["seq"]?.intValue ?? -1) }
                    say("seen \(newest) \(nowMicroseconds())")
                })
    }
    if observerCount > 0 { await allStarted.wait() }
    say("ready")
    for await line in inputLines() {
        let words = line.split(separator: " ")
        guard words.count == 2, words[0] == "report", let commit = UInt64(words[1]) else {
            fail("unknown command: \(line)")
        }
        await store.waitForLiveQueries(through: commit)
        let (sql, engine) = (documents.statistics, store.statistics)
        say(
            "report \(sql.statements) \(sql.reads) \(sql.catchUps) \(engine.evaluations) \(engine.incrementalUpdates) "
                + "\(deliveries.withLock { $0 })")
    }
    await stopAll(liveQueries)
    running.cancel()
    _ = await running.result
} catch {
    fail("\(error)")
}

/// Stops each live query, suspending rather than blocking while a handler finishes. (In top-level code the compiler
/// picks `stop()`'s blocking overload; in an async function, the suspending one.)
func stopAll(_ liveQueries: [LiveQuery]) async {
    for liveQuery in liveQueries { await liveQuery.stop() }
}
