import DocumentStoreKit
import TetherConcurrency
import TetherJSON

extension DocumentStoreConformance {
    static let feedChecks: [DocumentStoreCheck] = [
        DocumentStoreCheck(
            "feed-per-commit",
            "each commit publishes exactly its changes, numbered in order; unchanged upserts publish nothing"
        ) { store in
            let recorder = FeedRecorder(store)
            // Each commit is awaited on the feed before the next, so that none is merged into another.
            try await store.upsert(["_id": "a"], into: "items")
            _ = try await recorder.waitFor(1)
            try await store.write { transaction in
                try transaction.upsert(["_id": "a", "v": 1], into: "items")
                try transaction.upsert(["_id": "b"], into: "items")
                try transaction.upsert(["_id": "c"], into: "other")
            }
            _ = try await recorder.waitFor(2)
            try await store.upsert(["_id": "a", "v": 1], into: "items")  // identical: no commit published
            try await store.remove(id: "b", from: "items")
            let sets = try await recorder.waitFor(3)
            try require(sets.count == 3, "expected 3 sets, got \(sets.count): \(sets)")
            typealias Key = ChangeSet.Key
            try require(sets[0].changes == [Key(collection: "items", id: "a"): .inserted], "first: \(sets[0])")
            try require(
                sets[1].changes == [
                    Key(collection: "items", id: "a"): .updated, Key(collection: "items", id: "b"): .inserted,
                    Key(collection: "other", id: "c"): .inserted,
                ], "second: \(sets[1])")
            try require(sets[2].changes == [Key(collection: "items", id: "b"): .removed], "third: \(sets[2])")
            let numbers = sets.map(\.commits.upperBound)
            try require(
                numbers == numbers.sorted() && Set(numbers).count == 3, "commit numbers not increasing: \(numbers)")
        },
        DocumentStoreCheck(
            "feed-bytes",
            "an upsert that changes only a string's bytes (a decomposed accent for the precomposed one, equal to "
                + "Swift's ==) is a change: published, and read back as written"
        ) { store in
            let recorder = FeedRecorder(store)
            try await store.upsert(["_id": "a", "s": "caf\u{E9}"], into: "items")
            _ = try await recorder.waitFor(1)
            try await store.upsert(["_id": "a", "s": "cafe\u{301}"], into: "items")
            let sets = try await recorder.waitFor(2)
            try require(
                sets[1].changes == [ChangeSet.Key(collection: "items", id: "a"): .updated], "second: \(sets[1])")
            let back = try await store.read { try $0.document(id: "a", in: "items") }
            let bytes = back?.body["s"]?.stringValue.map { Array($0.utf8) }
            try require(bytes == Array("cafe\u{301}".utf8), "read back: \(String(describing: bytes))")
        },
        DocumentStoreCheck(
            "feed-within-commit",
            "changes to one document within a commit are merged: insert+update is an insert, insert+remove nothing"
        ) { store in
            let recorder = FeedRecorder(store)
            try await store.write { transaction in
                try transaction.upsert(["_id": "a"], into: "items")
                try transaction.upsert(["_id": "a", "v": 2], into: "items")
                try transaction.upsert(["_id": "gone"], into: "items")
                try transaction.remove(id: "gone", from: "items")
            }
            let sets = try await recorder.waitFor(1)
            try require(sets[0].changes == [ChangeSet.Key(collection: "items", id: "a"): .inserted], "got \(sets[0])")
        },
        DocumentStoreCheck("feed-not-on-rollback", "a rolled-back transaction publishes nothing") { store in
            // Inline: every set is received before its write returns, so once the later write has returned,
            // everything published is here — no wait for "nothing more".
            let received = FeedLog()
            let subscription = store.changes.subscribeInline(received.append) {}
            struct Abort: Error {}
            _ = try? await store.write { transaction in
                try transaction.upsert(["_id": "x"], into: "items")
                throw Abort()
            }
            try await store.upsert(["_id": "y"], into: "items")
            subscription.cancel()
            let all = received.all
            try require(all.count == 1, "expected only the later commit, got \(all)")
            try require(all[0].changes.keys.map(\.id) == ["y"], "got \(all[0])")
        },
        DocumentStoreCheck(
            "feed-inline",
            "an inline subscriber has each commit's set, unmerged and in order, when the write returns; none after cancel"
        ) { store in
            let received = FeedLog()
            let ended = Flag()
            let subscription = store.changes.subscribeInline(received.append) { ended.set() }
            for index in 0..<20 {
                try await store.upsert(["_id": .string("d\(index)")], into: "items")
                try require(received.count == index + 1, "after write \(index): \(received.count) sets received")
                try require(
                    received.all.last?.commits == store.changes.lastCommit...store.changes.lastCommit,
                    "the set for the write just returned carries its commit, alone")
            }
            let numbers = received.all.map(\.commits.upperBound)
            try require(zip(numbers, numbers.dropFirst()).allSatisfy { $0 + 1 == $1 }, "numbers: \(numbers)")
            subscription.cancel()
            try await store.upsert(["_id": "after"], into: "items")
            try require(received.count == 20, "a cancelled subscriber received \(received.count - 20) more")
            try require(!ended.isSet, "cancelling is not the feed ending")
        },
        DocumentStoreCheck(
            "feed-slow-subscriber",
            "a busy subscriber gets the commits it missed merged into one set, every touched document in it; the writer never waits"
        ) { store in
            let entered = Flag()
            let release = Flag()
            let received = FeedLog()
            let subscription = store.changes.subscribe { set in
                received.append(set)
                entered.set()
                while !release.isSet { usleepMilliseconds(1) }
            }
            try await store.upsert(["_id": "first"], into: "items")
            while !entered.isSet { try await Task.sleep(for: .milliseconds(1)) }
            // The subscriber is blocked: these 200 commits must not wait for it.
            for index in 0..<200 { try await store.upsert(["_id": .string("d\(index)")], into: "items") }
            try await store.remove(id: "d0", from: "items")
            release.set()
            for _ in 0..<500 where received.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(50))
            let sets = received.all
            subscription.cancel()
            try require(sets.count == 2, "expected the first set and one merged set, got \(sets.count)")
            try require(
                sets[1].changes.count == 200, "merged set: expected 200 documents, got \(sets[1].changes.count)")
            try require(
                sets[1].changes[ChangeSet.Key(collection: "items", id: "d0")] == .removed,
                "d0, inserted then removed, is reported removed")
            try require(sets[1].commits.count == 201, "merged set should cover 201 commits, covers \(sets[1].commits)")
        },
        DocumentStoreCheck(
            "commit-numbers",
            "a read reports the number of the last commit it sees: the number that commit's change set carries"
        ) { store in
            let recorder = FeedRecorder(store)
            let start = try await store.read { try $0.commitNumber() }
            try await store.upsert(["_id": "a"], into: "items")
            _ = try await recorder.waitFor(1)  // so that the next commit's set is not merged into this one
            let afterFirst = try await store.read { try $0.commitNumber() }
            try await store.upsert(["_id": "a"], into: "items")  // identical: no commit
            try require(
                try await store.read { try $0.commitNumber() } == afterFirst,
                "an unchanged write must not advance the number")
            try await store.write { transaction in
                try transaction.upsert(["_id": "b"], into: "items")
                try require(
                    try transaction.commitNumber() == afterFirst, "inside a transaction: the last commit before it")
            }
            let afterSecond = try await store.read { try $0.commitNumber() }
            try require(
                afterFirst == start + 1 && afterSecond == start + 2, "numbers: \(start), \(afterFirst), \(afterSecond)")
            let sets = try await recorder.waitFor(2)
            try require(
                sets.map(\.commits.upperBound) == [afterFirst, afterSecond], "sets carry \(sets.map(\.commits))")
            try require(store.changes.lastCommit == afterSecond, "lastCommit \(store.changes.lastCommit)")
        },
        DocumentStoreCheck("feed-stream", "the AsyncSequence form yields merged sets and ends when cancelled") {
            store in
            let stream = store.changes.stream()
            try await store.upsert(["_id": "a"], into: "items")
            try await store.upsert(["_id": "b"], into: "items")
            var iterator = stream.makeAsyncIterator()
            var seen: Set<String> = []
            while seen.count < 2, let set = await iterator.next() { seen.formUnion(set.changes.keys.map(\.id)) }
            try require(seen == ["a", "b"], "stream saw \(seen)")
            stream.cancel()
            let after = await iterator.next()
            try require(after == nil, "a cancelled stream must end")
        },
    ]
}

/// Change sets received by a handler.
final class FeedLog: Sendable {
    private let sets = LockedValue<[ChangeSet]>([])

    func append(_ set: ChangeSet) { sets.withLock { $0.append(set) } }
    var count: Int { sets.withLock { $0.count } }
    var all: [ChangeSet] { sets.withLock { $0 } }
}
