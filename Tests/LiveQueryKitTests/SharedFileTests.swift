import DocumentStoreKit
import Foundation
import LiveQueryKit
import SQLiteAdapter
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting

/// Live queries over a SQLite file that another process — here, a second store on the same file — writes to.
@Suite("Live queries on a shared SQLite file")
struct SharedFileTests {
    /// A store path in a folder of its own, removed at exit (`TemporaryFiles`).
    static func temporaryFile() throws -> String {
        let directory = NSTemporaryDirectory() + "tether-shared-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        TemporaryFiles.shared.add(directory)
        return directory + "/store.sqlite"
    }

    @Test("A live query in one store hears another store's writes to the file, ending on the final state")
    func anotherWriter() async throws {
        let path = try Self.temporaryFile()
        let here = try SQLiteDocumentStore(path: path)
        let there = try SQLiteDocumentStore(path: path)
        let store = Store(here)
        let delivered = LockedValue<[String]>([])
        let liveQuery = try store.collection("items").find("group == 'a'").observeLocal { documents, _ in
            delivered.withLock { $0 = documents.map(\.id).sorted() }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await here.followOtherProcesses(checkingEvery: .milliseconds(5)) }
            for index in 0..<60 {
                try await there.upsert(
                    ["_id": .string(String(format: "d%02d", index)), "group": index % 3 == 0 ? "b" : "a"], into: "items"
                )
            }
            try await there.remove(id: "d01", from: "items")
            let expected = (0..<60).filter { $0 % 3 != 0 && $0 != 1 }.map { String(format: "d%02d", $0) }
            try await eventually(within: .seconds(60)) { delivered.withLock { $0 } == expected }
            group.cancelAll()
        }
        await liveQuery.stop()
        try here.close()
        try there.close()
    }

    @Test(
        "Commits pruned from the log before this store read them: its live queries run again, so a removal among them is not lost"
    )
    func prunedCommits() async throws {
        let path = try Self.temporaryFile()
        let here = try SQLiteDocumentStore(path: path)
        var pruning = SQLiteConfiguration()
        pruning.changeLogMinimumAge = .zero
        let there = try SQLiteDocumentStore(path: path, configuration: pruning)
        let store = Store(here)
        try await here.upsert(["_id": "keep"], into: "items")
        let delivered = LockedValue<[String]>([])
        let liveQuery = try store.collection("items").findAll().observeLocal { documents, _ in
            delivered.withLock { $0 = documents.map(\.id).sorted() }
        }
        try await eventually { delivered.withLock { $0 } == ["keep"] }
        // Nobody here follows the log; the other writer prunes it at commit 256, removal included.
        _ = try await there.remove(id: "keep", from: "items")
        for index in 0..<300 { try await there.upsert(["_id": .string("n\(index)")], into: "noise") }
        #expect(try await there.changeLogCount() < 100, "pruned")
        // This store's next write — to another collection — finds commits missing before the log's first entry:
        // every query runs again, though no commit it can read touched "items".
        try await here.upsert(["_id": "mine"], into: "other")
        try await eventually(within: .seconds(60)) { delivered.withLock { $0 }.isEmpty }
        await liveQuery.stop()
        try here.close()
        try there.close()
    }
}
