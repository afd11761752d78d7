import DocumentStoreKit
import Foundation
import LiveQueryKit
import PersistenceKit
import SQLiteAdapter
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Fault injection: a SQLite store whose writes fail at random, some after their commit, under concurrent writers
/// and a live query. Every failure is a typed `PersistenceError`; every write that returned is on disk, also after
/// reopening the file; and the live query ends on the final state.
@Suite("Fault injection: writes that fail at random", .leakChecked)
struct FaultInjectionTests {
    @Test(
        "Concurrent writers, random write failures, a live query: nothing acknowledged is lost",
        arguments: [UInt64(3), 99])
    func faultyWrites(seed: UInt64) async throws {
        let directory = NSTemporaryDirectory() + "tether-faults-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/store.sqlite"
        let sqlite = try SQLiteDocumentStore(path: path)
        let faulty = FaultyDocumentStore(base: sqlite, faults: .init(failure: 0.25, afterCommit: 0.3), seed: seed)
        let store = Store(faulty)
        let items = store.collection("items")

        let delivered = LockedValue<[String: Double]>([:])
        let liveQuery = try items.find("group == 'a'").observeLocal { documents, _ in
            let values = Dictionary(uniqueKeysWithValues: documents.map { ($0.id, $0.value["seq"]?.doubleValue ?? -1) })
            delivered.withLock { $0 = values }
        }

        let acknowledged = LockedValue<[String: Double]>([:])
        let failures = LockedValue<[PersistenceError.Kind]>([])
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for sequence in 1...150 {
                        let id = "w\(writer)-\(sequence % 10)"
                        let document: JSONValue = [
                            "_id": .string(id), "group": sequence % 3 == 0 ? "b" : "a",
                            "seq": .number(Double(sequence)),
                        ]
                        do {
                            _ = try await items.upsert(document)
                            acknowledged.withLock { $0[id] = max($0[id] ?? 0, Double(sequence)) }
                        } catch let error as PersistenceError {
                            failures.withLock { $0.append(error.kind) }
                        } catch {
                            Issue.record("an untyped failure: \(error)")
                        }
                    }
                }
            }
        }
        let counts = faulty.failures
        #expect(counts.total > 0 && counts.afterCommit > 0, "faults happened: \(counts)")
        #expect(failures.withLock { $0 }.allSatisfy { $0 == .ioError }, "every failure is a typed ioError")

        // Every acknowledged write is there (a later write, even one whose acknowledgement was lost, may be newer).
        func check(_ reader: any DocumentStore, _ label: String) async throws {
            for (id, sequence) in acknowledged.withLock({ $0 }) {
                let stored = try await reader.document(id: id, in: "items")
                #expect((stored?.body["seq"]?.doubleValue ?? 0) >= sequence, "\(label): \(id) kept write \(sequence)")
            }
        }
        try await check(sqlite, "live")

        // The live query ends on the final state.
        let expected = Dictionary(
            uniqueKeysWithValues: try await items.find("group == 'a'").exec().map {
                ($0.id, $0.value["seq"]?.doubleValue ?? -1)
            })
        // Offered once caught up; the handler runs on its own queue, so the delivery may still be on its way.
        await store.waitForLiveQueries()
        do {
            try await eventually { delivered.withLock { $0 } == expected }
        } catch {
            Issue.record("the observer did not end on the final state: \(delivered.withLock { $0 }), not \(expected)")
        }
        await liveQuery.stop()

        try sqlite.close()
        let reopened = try SQLiteDocumentStore(path: path)
        try await check(reopened, "reopened")
        #expect(try await reopened.integrityCheck() == ["ok"])
        try reopened.close()
    }
}
