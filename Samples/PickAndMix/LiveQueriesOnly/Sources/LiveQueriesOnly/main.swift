// Live queries only: a SQLite store, a query observed with next-signal while a writer commits, the latest result
// delivered once signalled. Exits non-zero if a promise is broken.

import Foundation
import LiveQueryKit
import SQLiteAdapter
import Synchronization

let path = NSTemporaryDirectory() + "tether-pick-and-mix-\(UUID().uuidString).sqlite"
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
let store = Store(try SQLiteDocumentStore(path: path))
let items = store.collection("items")
var failures = 0

@MainActor
func check(_ condition: Bool, _ promise: String) {
    print(condition ? "✔ \(promise)" : "✘ \(promise)")
    if !condition { failures += 1 }
}

let deliveries = Mutex<[Int]>([])
let pending = Mutex<SignalNext?>(nil)
let query = try items.find("store_id == $args.store", args: ["store": "abc123"]).observeLocalWithNextSignal {
    documents, _, signalNext in
    deliveries.withLock { $0.append(documents.count) }
    pending.withLock { $0 = signalNext }
}
while deliveries.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(1)) }
for index in 0..<500 {
    _ = try await items.upsert(["_id": .string("item-\(index)"), "store_id": index % 2 == 0 ? "abc123" : "other"])
}
check(deliveries.withLock { $0 } == [0], "nothing delivered while the handler withholds its signal")
// Each signal lets one delivery through: the latest result at that moment. Signal until the final one arrives.
let deadline = ContinuousClock.now + .seconds(30)
while deliveries.withLock({ $0.last }) != 250, ContinuousClock.now < deadline {
    let seen = deliveries.withLock { $0.count }
    pending.withLock { $0 }?()
    while deliveries.withLock({ $0.count }) == seen, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(1))
    }
}
let seen = deliveries.withLock { $0 }
print("  deliveries: \(seen)")
check(seen.last == 250, "the final result, 250 documents, delivered")
check(seen.count <= 4, "500 commits, a handful of deliveries (\(seen.count)), never a queue of them")
await query.stop()
exit(failures == 0 ? 0 : 1)
