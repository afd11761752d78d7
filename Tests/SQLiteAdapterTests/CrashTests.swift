import DocumentStoreKit
import Foundation
import SQLiteAdapter
import Testing
import TetherTesting
import TetherTestingTraits

/// A crash in a real separate process. It needs no network, so CI's release and ThreadSanitizer stages run it too:
/// there the child is built with the sanitizer, and ``ProbeProcess`` forwards any report in its output.
@Suite("A crash, in a real separate process", .needsProcessorTime, .timeLimit(minutes: 2), .leakChecked)
struct CrashTests {
    @Test("SIGKILL mid-write: the file opens intact and holds every commit the child reported done")
    func sigkill() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("store.sqlite")
            let child = try ProbeProcess(["write-loop", path], in: directory)
            try await eventually { child.lines.count >= 300 }
            kill(child.process.processIdentifier, SIGKILL)
            let outcome = await child.finish()
            #expect(outcome.status == SIGKILL && outcome.killedAtDeadline == nil, "\(outcome)")
            let lines = outcome.lines
            // Every "committed first last" line is a commit that returned before the kill.
            let reported = lines.compactMap { line -> Int? in
                let parts = line.split(separator: " ")
                return parts.count == 3 && parts[0] == "committed" ? Int(parts[2]) : nil
            }
            let lastReported = try #require(reported.max())
            let store = try SQLiteDocumentStore(path: path)
            #expect(try await store.integrityCheck() == ["ok"])
            let count = try await store.read { try $0.count(matching: DocumentQuery(collection: "items")) }
            #expect(
                count >= lastReported + 1, "the child reported \(lastReported + 1) documents committed; \(count) found")
            for index in stride(from: 0, through: lastReported, by: 7) {
                #expect(
                    try await store.document(id: "d\(index)", in: "items") != nil, "d\(index) was reported committed")
            }
            try store.close()
        }
    }
}
