import DocumentStoreKit
import Foundation
import PersistenceKit
import SQLiteAdapter
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

@Suite(
    "SQLiteDocumentStore: the document-store conformance suite on a real file", .timeLimit(minutes: 1), .leakChecked)
struct SQLiteDocumentStoreTests {
    @Test("Conformance", arguments: DocumentStoreConformance.checks)
    func conformance(_ check: DocumentStoreCheck) async throws {
        try await TemporaryDirectory.with { directory in
            let store = try SQLiteDocumentStore(path: directory.file("store.sqlite"))
            try await check.run(on: store)
            try store.close()
        }
    }

    @Test("Documents survive closing and reopening; the schema is not migrated twice")
    func reopen() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("store.sqlite")
            do {
                let store = try SQLiteDocumentStore(path: path)
                try await store.upsert(["_id": "a", "v": 1], into: "items")
                try store.close()
            }
            let again = try SQLiteDocumentStore(path: path)
            #expect(try await again.document(id: "a", in: "items")?.body == ["_id": "a", "v": 1])
            // The feed starts at the file's commit: waiting for what a read reported does not wait for a new one.
            #expect(again.changes.lastCommit == 1)
            #expect(try await again.integrityCheck() == ["ok"])
            try again.close()
        }
    }

    @Test("A cancelled write throws CancellationError, and its transaction is rolled back")
    func cancelledWrite() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try SQLiteDocumentStore(path: directory.file("store.sqlite"))
            let started = LockedValue(false)
            let task = Task {
                try await store.write { transaction in
                    started.withLock { $0 = true }
                    for index in 0..<2_000_000 {
                        _ = try transaction.upsert(["_id": .string("d\(index)")], into: "items")
                    }
                }
            }
            try await eventually { started.withLock { $0 } }
            task.cancel()
            let outcome = await task.result
            #expect(throws: CancellationError.self) { try outcome.get() }
            let everything = try DocumentQuery(collection: "items")
            #expect(
                try await store.read { try $0.count(matching: everything) } == 0,
                "nothing of the cancelled transaction stays")
            try store.close()
        }
    }

    @Test("The database file and its -wal and -shm companions are created 0600")
    func permissions() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("store.sqlite")
            let store = try SQLiteDocumentStore(path: path)
            try await store.upsert(["_id": "a"], into: "items")
            for file in [path, path + "-wal", path + "-shm"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: file)
                #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(file)")
            }
            try store.close()
        }
    }

    @Test("A closed store fails with closed, never crashes")
    func closed() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try SQLiteDocumentStore(path: directory.file("store.sqlite"))
            try store.close()
            await #expect { try await store.upsert(["_id": "a"], into: "items") } throws: {
                ($0 as? PersistenceError)?.kind == .closed
            }
            await #expect { _ = try await store.document(id: "a", in: "items") } throws: {
                ($0 as? PersistenceError)?.kind == .closed
            }
        }
    }
}
