import DocumentStoreKit
import Foundation
import PersistenceKit
import TetherConcurrency
import TetherJSON

extension DocumentStoreConformance {
    static let basicChecks: [DocumentStoreCheck] = [
        DocumentStoreCheck(
            "upsert-get-remove", "upsert inserts then updates; get returns the document; remove removes it"
        ) { store in
            let first = try await store.upsert(["_id": "a", "n": 1], into: "items")
            try require(first == .inserted, "first upsert: expected inserted, got \(String(describing: first))")
            let second = try await store.upsert(["_id": "a", "n": 2], into: "items")
            try require(second == .updated, "second upsert: expected updated, got \(String(describing: second))")
            let same = try await store.upsert(["_id": "a", "n": 2], into: "items")
            try require(same == nil, "identical upsert: expected nil (no change), got \(String(describing: same))")
            let fetched = try await store.document(id: "a", in: "items")
            try require(fetched?.body == ["_id": "a", "n": 2], "get: \(String(describing: fetched))")
            try require(try await store.document(id: "a", in: "other") == nil, "collections are separate")
            try require(try await store.remove(id: "a", from: "items"), "remove: expected true")
            try require(try await !store.remove(id: "a", from: "items"), "second remove: expected false")
            try require(try await store.document(id: "a", in: "items") == nil, "removed document still there")
        },
        DocumentStoreCheck(
            "insert-duplicate-fails", "insert of an existing _id fails with duplicateID; the transaction can go on"
        ) { store in
            try await store.insert(["_id": "a", "v": "first"], into: "items")
            try await expectError(.duplicateID, "second insert") {
                try await store.insert(["_id": "a", "v": "second"], into: "items")
            }
            let kept = try await store.document(id: "a", in: "items")
            try require(kept?.body["v"] == "first", "the first document must be kept, got \(String(describing: kept))")
            try await store.write { transaction in
                do {
                    try transaction.insert(["_id": "a"], into: "items")
                } catch let error as PersistenceError where error.kind == .duplicateID {}
                try transaction.insert(["_id": "b"], into: "items")
            }
            try require(
                try await store.document(id: "b", in: "items") != nil, "a write after a caught duplicate must commit")
        },
        DocumentStoreCheck(
            "transaction-atomic", "a transaction that throws changes nothing; one that returns commits all of it"
        ) { store in
            try await store.upsert(["_id": "keep", "v": 1], into: "items")
            struct Abort: Error {}
            do {
                try await store.write { transaction in
                    try transaction.upsert(["_id": "x"], into: "items")
                    try transaction.upsert(["_id": "keep", "v": 2], into: "items")
                    try transaction.remove(id: "keep", from: "items")
                    throw Abort()
                }
                throw DocumentStoreConformanceFailure(description: "the write should have thrown")
            } catch is Abort {}
            try require(try await store.document(id: "x", in: "items") == nil, "rolled-back insert is visible")
            let kept = try await store.document(id: "keep", in: "items")
            try require(kept?.body["v"] == 1, "rolled-back update or remove is visible: \(String(describing: kept))")
            let count = try await store.write { transaction -> Int in
                for index in 0..<50 { try transaction.upsert(["_id": .string("d\(index)")], into: "batch") }
                return try transaction.count(matching: DocumentQuery(collection: "batch"))
            }
            try require(count == 50, "a transaction sees its own writes: \(count)")
            let all = try await store.documents(matching: DocumentQuery(collection: "batch"))
            try require(all.count == 50, "committed batch: \(all.count) documents")
        },
        DocumentStoreCheck("reads-see-commits-only", "a read during a write sees the state before it") { store in
            try await store.upsert(["_id": "a", "v": 1], into: "items")
            let gate = Gate()
            let writer = Task {
                try await store.write { transaction in
                    try transaction.upsert(["_id": "a", "v": 2], into: "items")
                    gate.open()
                    gate.waitForRelease()
                }
            }
            await gate.waitUntilOpen()
            let during = try await store.document(id: "a", in: "items")
            gate.release()
            try await writer.value
            try require(during?.body["v"] == 1, "a read during the write saw \(String(describing: during))")
            let after = try await store.document(id: "a", in: "items")
            try require(after?.body["v"] == 2, "after the commit: \(String(describing: after))")
        },
        DocumentStoreCheck(
            "concurrent-writers", "8 tasks × 100 upserts and reads at once: every write lands, no lock errors"
        ) { store in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        for index in 0..<100 {
                            try await store.upsert(
                                ["_id": .string("t\(task)-\(index)"), "task": .number(Double(task))], into: "load")
                            _ = try await store.document(id: "t\(task)-\(index / 2)", in: "load")
                        }
                    }
                }
                try await group.waitForAll()
            }
            let count = try await store.read { try $0.count(matching: DocumentQuery(collection: "load")) }
            try require(count == 800, "expected 800 documents, found \(count)")
        },
        DocumentStoreCheck("collection-names", "collectionNames lists the collections that hold documents") { store in
            try await store.upsert(["_id": "1"], into: "b")
            try await store.upsert(["_id": "1"], into: "a")
            try await store.upsert(["_id": "1"], into: "c")
            try await store.remove(id: "1", from: "c")
            let names = try await store.read { try $0.collectionNames() }
            try require(names == ["a", "b"], "expected [a, b], got \(names)")
        },
    ]
}

/// A one-shot rendezvous between a write closure (a blocking thread) and a task.
final class Gate: Sendable {
    let opened = Flag()
    let released = Flag()

    func open() { opened.set() }
    func release() { released.set() }

    func waitUntilOpen() async {
        while !opened.isSet { try? await Task.sleep(for: .milliseconds(1)) }
    }

    /// Blocks the writer's thread (it is GRDB's or the store's writer queue, not the cooperative pool).
    func waitForRelease() {
        while !released.isSet { usleepMilliseconds(1) }
    }
}

/// A flag that is set once.
final class Flag: Sendable {
    private let value = LockedValue(false)

    var isSet: Bool { value.withLock { $0 } }

    func set() { value.withLock { $0 = true } }
}

func usleepMilliseconds(_ milliseconds: UInt32) {
    usleep(milliseconds * 1000)
}
