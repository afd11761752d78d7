import DocumentStoreKit
import Foundation
import SQLiteAdapter
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// The change log: commits made through other connections — another process, or a second store on the same file —
/// reach a store's change feed in commit order, each once.
@Suite("Change log across processes", .needsProcessorTime)
struct ChangeLogTests {
    /// Every commit the feed publishes, and every document id it names.
    final class FeedRecord: Sendable {
        private let state: LockedValue<(commits: [UInt64], ids: Set<String>)>
        private let subscription: ChangeSubscription

        init(_ store: SQLiteDocumentStore) {
            let state = LockedValue<(commits: [UInt64], ids: Set<String>)>(([], []))
            self.state = state
            subscription = store.changes.subscribeInline(
                { set in
                    state.withLock { state in
                        state.commits.append(set.commits.upperBound)
                        state.ids.formUnion(set.changes.keys.map(\.id))
                    }
                }, finished: {})
        }

        var commits: [UInt64] { state.withLock { $0.commits } }
        var ids: Set<String> { state.withLock { $0.ids } }
    }

    static func commit(of store: SQLiteDocumentStore) async throws -> UInt64 {
        try await store.read { try $0.commitNumber() }
    }

    @Test("A following store hears another store's commits on the same file, and its own, in commit order, each once")
    func followsAnotherConnection() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("shared.sqlite")
            let here = try SQLiteDocumentStore(path: path)
            let there = try SQLiteDocumentStore(path: path)
            let record = FeedRecord(here)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await here.followOtherProcesses(checkingEvery: .milliseconds(2)) }
                for index in 0..<200 {
                    try await there.upsert(["_id": .string("there\(index)")], into: "items")
                    if index % 20 == 0 { try await here.upsert(["_id": .string("here\(index)")], into: "items") }
                }
                let last = try await Self.commit(of: there)
                try await eventually(within: .seconds(60)) { record.commits.last == last }
                group.cancelAll()
            }
            #expect(record.commits == Array(1...210), "200 there, 10 here: every commit once, in order")
            let expected = Set((0..<200).map { "there\($0)" } + stride(from: 0, to: 200, by: 20).map { "here\($0)" })
            #expect(record.ids == expected)
            try here.close()
            try there.close()
        }
    }

    @Test("Without a follower, a store's own write first publishes the commits other connections made before it")
    func ownWriteCatchesUp() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("shared.sqlite")
            let here = try SQLiteDocumentStore(path: path)
            let there = try SQLiteDocumentStore(path: path)
            let record = FeedRecord(here)
            for index in 0..<5 { try await there.upsert(["_id": .string("there\(index)")], into: "items") }
            #expect(record.commits.isEmpty, "nobody follows: nothing yet")
            try await here.upsert(["_id": "here"], into: "items")
            #expect(record.commits == [1, 2, 3, 4, 5, 6], "before the write returned, in order")
            #expect(record.ids.contains("there4") && record.ids.contains("here"))
            try here.close()
            try there.close()
        }
    }

    @Test("Another process writes 300 documents: every one reaches the following store's feed, in order")
    func anotherProcess() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("shared.sqlite")
            let here = try SQLiteDocumentStore(path: path)
            try await here.upsert(["_id": "first"], into: "items")
            let record = FeedRecord(here)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await here.followOtherProcesses(checkingEvery: .milliseconds(5)) }
                let probe = try await ProbeProcess.run(["write", path, "300", "p"], in: directory)
                #expect(probe.status == 0, "\(probe)")
                let last = try #require(probe.lines.last.flatMap { UInt64($0.split(separator: " ").last ?? "") })
                try await eventually(within: .seconds(60)) { record.commits.last == last }
                group.cancelAll()
            }
            #expect(record.commits == Array(2...301))
            #expect(record.ids == Set((0..<300).map { "p\($0)" }))
            try here.close()
        }
    }

    @Test("The log is pruned once no live reader needs its entries; a minimum age keeps recent ones")
    func pruning() async throws {
        try await TemporaryDirectory.with { directory in
            var keeping = SQLiteConfiguration()
            keeping.changeLogMinimumAge = .seconds(3600)
            let kept = try SQLiteDocumentStore(path: directory.file("kept.sqlite"), configuration: keeping)
            var pruning = SQLiteConfiguration()
            pruning.changeLogMinimumAge = .zero
            let pruned = try SQLiteDocumentStore(path: directory.file("pruned.sqlite"), configuration: pruning)
            for store in [kept, pruned] {
                for index in 0..<600 { try await store.upsert(["_id": .string("d\(index)")], into: "items") }
            }
            #expect(try await kept.changeLogCount() == 600, "younger than the minimum age: all kept")
            // Pruned at commits 256 and 512 (every entry no reader needs), then 88 more appended.
            #expect(try await pruned.changeLogCount() == 89)
            try kept.close()
            try pruned.close()
        }
    }
}
