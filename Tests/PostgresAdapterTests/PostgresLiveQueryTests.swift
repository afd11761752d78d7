import DocumentStoreKit
import LiveQueryKit
import PostgresAdapter
import Testing
import TetherJSON
import TetherTestingTraits

/// Live queries on PostgreSQL, unchanged for the user: a `Store` over a `PostgresDocumentStore` observes commits made
/// by another store on the same schema — another process, as far as it can tell.
@Suite(
    "PostgreSQL: live queries see other stores' commits", PostgresTestServer.required, .needsProcessorTime,
    .timeLimit(minutes: 2))
struct PostgresLiveQueryTests {
    /// The writes, in commit order: upserts moving documents between groups, and removals.
    static let writes: [(id: String, group: String?)] = (0..<60).map { index in
        (id: "d\(index % 13)", group: index % 7 == 6 ? nil : (index % 3 == 0 ? "b" : "a"))
    }

    /// The ids in group "a" after each commit, sorted (index 0: before any). A write that changes nothing — an
    /// upsert of the same body, a removal of a missing document — makes no commit.
    static let expected: [[String]] = {
        var groups: [String: String] = [:]
        var states: [[String]] = [[]]
        for write in writes where groups[write.id] != write.group {
            groups[write.id] = write.group
            states.append(groups.filter { $0.value == "a" }.keys.sorted())
        }
        return states
    }()

    @Test(
        "Every result delivered is the query over a committed state (by its commit number); the last is the final one")
    func crossStoreSnapshots() async throws {
        let configuration = try PostgresTestServer.freshConfiguration()
        let writer = try PostgresDocumentStore(configuration: configuration)
        try await PostgresTestServer.withStore(configuration) { observed throws in
            try await PostgresTestServer.running(writer) { writer throws in
                let store = Store(observed)
                let snapshots = try store.collection("items").find("group == 'a'").snapshots()
                let writing = Task {
                    for write in Self.writes {
                        if let group = write.group {
                            try await writer.upsert(["_id": .string(write.id), "group": .string(group)], into: "items")
                        } else {
                            try await writer.remove(id: write.id, from: "items")
                        }
                    }
                }
                var delivered = 0
                for try await snapshot in snapshots {
                    delivered += 1
                    let ids = snapshot.documents.map(\.id).sorted()
                    #expect(ids == Self.expected[Int(snapshot.commit)], "at commit \(snapshot.commit)")
                    if snapshot.commit == UInt64(Self.expected.count - 1) { break }
                }
                try await writing.value
                #expect(delivered >= 2)
            }
        }
    }
}
