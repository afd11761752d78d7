// A process of its own for LiveQueryKitTests' engine-thread check, which holds every thread of Swift concurrency's
// cooperative pool: in the test process, every other test would wait for as long as the pool is held.
//
//   tether-engine-probe pool-held <memory|sqlite> <directory>
//       Makes a store of that kind (the SQLite file in <directory>) holding document "a", blocks every thread of the
//       pool, then observes `group == 'g'` with a handler on a queue of its own and upserts "b". Prints
//       "holding <threads>" once the pool is held, "result <ids>" for each result delivered, and "done" once the
//       update has arrived, the pool was held throughout and a task started meanwhile ran only after the release.
//       Exits with 2 and the reason otherwise.
import Dispatch
import Foundation
import LiveQueryKit
import SQLiteAdapter
import TetherConcurrency
import TetherJSON
import TetherTesting

/// The check, run on a queue of its own: nothing of it needs the pool it holds.
func whilePoolHeld(_ kind: String, in directory: String) async throws {
    let store =
        kind == "sqlite"
        ? Store(try SQLiteDocumentStore(path: directory + "/store.sqlite")) : Store.inMemory()
    let items = store.collection("items")
    try await items.upsert(["_id": "a", "group": "g"])
    let received = LockedValue<[[String]]>([])
    let blockade = PoolBlockade()
    defer { blockade.release() }
    try await blockade.hold()
    ProbeOutput.say("holding \(blockade.width)")
    let liveQuery = try items.find("group == 'g'").sort("_id").observeLocal(deliverOn: DispatchQueue(label: "handler"))
    { documents, _ in
        let ids = documents.map(\.id)
        received.withLock { $0.append(ids) }
        ProbeOutput.say("result " + ids.joined(separator: ","))
    }
    try await eventually(within: .seconds(10)) { received.withLock { $0 } == [["a"]] }
    try await items.upsert(["_id": "b", "group": "g"])
    try await eventually(within: .seconds(10)) { received.withLock { $0.last } == ["a", "b"] }
    guard blockade.isHolding else { ProbeOutput.fail("the pool was not held throughout") }
    blockade.release()
    guard try await !blockade.canaryRanWhileHolding() else {
        ProbeOutput.fail("a thread of the pool was free while it was held")
    }
    await liveQuery.stop()
    ProbeOutput.say("done")
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3, arguments[0] == "pool-held", ["memory", "sqlite"].contains(arguments[1]) else {
    ProbeOutput.fail("usage: tether-engine-probe pool-held <memory|sqlite> <directory>")
}
do {
    try await withTaskExecutorPreference(DispatchQueueExecutor(label: "tether.engine-probe")) {
        try await whilePoolHeld(arguments[1], in: arguments[2])
    }
} catch {
    ProbeOutput.fail("\(error)")
}
