// Another process for PostgresAdapterTests: writers and observers that share a schema only through the server.
//
//   tether-postgres-probe write <url> <schema> <count> <prefix>
//       Inserts <prefix>0 … <prefix><count-1> (group "b" for every third, else "a"), one commit each, printing
//       "committed <commit> <id> <group>" after each commit returns, then "done".
//   tether-postgres-probe observe <url> <schema> <last commit>
//       Prints "ready" once observing, then "result <commit> <ids in group a, sorted, comma-separated>" for every
//       result its live query delivers (snapshots(): next-signal back pressure), until one is at <last commit>.
//   tether-postgres-probe observe-slow <url> <schema> <last commit> <lag>
//       A slow consumer (observeLocalWithNextSignal): prints "ready" once observing and "result <commit> <count>" for
//       each result its handler takes; it signals for the next only once the store has seen <lag> commits past the
//       one it holds (slow by commits, not by a clock). Once a result at <last commit> is in, prints
//       "statistics <submitted> <delivered> <coalesced> <held high-water>" and "engine <evaluations> <incremental>
//       <deferrals>".
//   tether-postgres-probe write-batches <url> <schema> <hold at>
//       One transaction of 20 documents per batch ("batch": n), printing "committed <n>" after each commit returns;
//       in batch <hold at>, after its tenth document, prints "holding <n>" and stops there, inside the transaction,
//       for the test to kill it with SIGKILL.
import DocumentStoreKit
import Foundation
import LiveQueryKit
import PostgresAdapter
import TetherJSON
import TetherTesting

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3 else { ProbeOutput.fail("usage: tether-postgres-probe <mode> <url> <schema> …") }
let (mode, url, schema) = (arguments[0], arguments[1], arguments[2])

do {
    var configuration = try PostgresConfiguration(url: url)
    configuration.schema = schema
    configuration.poolSize = 2
    let store = try PostgresDocumentStore(configuration: configuration)
    let running = Task { try await store.run() }
    switch mode {
    case "write":
        guard arguments.count == 5, let count = Int(arguments[3]) else {
            ProbeOutput.fail("usage: write <url> <schema> <count> <prefix>")
        }
        let prefix = arguments[4]
        for index in 0..<count {
            let (id, group) = ("\(prefix)\(index)", index % 3 == 0 ? "b" : "a")
            // Writers are serialized from their first statement: the last commit seen inside is the one before.
            let commit = try await store.write { transaction in
                let before = try transaction.commitNumber()
                try transaction.insert(["_id": .string(id), "group": .string(group)], into: "items")
                return before + 1
            }
            ProbeOutput.say("committed \(commit) \(id) \(group)")
        }
        ProbeOutput.say("done")
    case "observe":
        guard arguments.count == 4, let last = UInt64(arguments[3]) else {
            ProbeOutput.fail("usage: observe <url> <schema> <last commit>")
        }
        let live = Store(store)
        var ready = false
        for try await snapshot in try live.collection("items").find("group == 'a'").snapshots() {
            if !ready {
                ProbeOutput.say("ready")
                ready = true
            }
            ProbeOutput.say("result \(snapshot.commit) \(snapshot.documents.map(\.id).sorted().joined(separator: ","))")
            if snapshot.commit >= last { break }
        }
    case "observe-slow":
        guard arguments.count == 5, let last = UInt64(arguments[3]), let lag = UInt64(arguments[4]) else {
            ProbeOutput.fail("usage: observe-slow <url> <schema> <last commit> <lag>")
        }
        try await observeSlowly(store, last: last, lag: lag)
    case "write-batches":
        guard arguments.count == 4, let hold = Int(arguments[3]) else {
            ProbeOutput.fail("usage: write-batches <url> <schema> <hold at>")
        }
        var batch = 0
        while true {
            try await store.write { [batch] transaction in
                for index in 0..<20 {
                    try transaction.insert(
                        ["_id": .string("b\(batch)-\(index)"), "batch": .number(Double(batch))], into: "batches")
                    if batch == hold, index == 9 {
                        ProbeOutput.say("holding \(batch)")
                        // The body runs on the store's own thread pool: it may wait here, until the test kills us.
                        DispatchSemaphore(value: 0).wait()
                    }
                }
            }
            ProbeOutput.say("committed \(batch)")
            batch += 1
        }
    default:
        ProbeOutput.fail("unknown mode \(mode)")
    }
    running.cancel()
    _ = await running.result
} catch {
    ProbeOutput.fail("\(error)")
}
