import DocumentStoreKit
import PersistenceKit
import PostgresAdapter
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// The change feed across stores that share a schema — as processes on several machines would. Each store here has
/// its own pool, listener and publisher, exactly as in another process; the three-process tests run real ones.
@Suite(
    "PostgreSQL: commits reach every store on the schema, in order, none lost", PostgresTestServer.required,
    .needsProcessorTime,
    .timeLimit(minutes: 2))
struct PostgresChangeFeedTests {
    /// Records the commit numbers a feed publishes, inline, in order.
    final class CommitRecorder: Sendable {
        let commits = LockedValue<[UInt64]>([])
        let unknown = LockedValue(false)
        let subscription: ChangeSubscription

        init(_ feed: ChangeFeed) {
            let (commits, unknown) = (commits, unknown)
            subscription = feed.subscribeInline(
                { set in
                    commits.withLock { $0.append(contentsOf: Array(set.commits)) }
                    if set.hasUnknownChanges { unknown.withLock { $0 = true } }
                }, finished: {})
        }

        var recorded: [UInt64] { commits.withLock { $0 } }

        /// Waits until commit `last` is recorded; then every commit from `first` to it must be there once, in order.
        func expectContiguous(from first: UInt64 = 1, to last: UInt64, _ who: String) async throws {
            try await eventually(within: .seconds(20)) { self.recorded.last.map { $0 >= last } ?? false }
            let recorded = self.recorded
            #expect(recorded == Array(first...last), "\(who) published \(recorded)")
            #expect(!unknown.withLock { $0 }, "\(who): no commit was pruned before it was read")
        }
    }

    /// Runs two stores on one fresh schema.
    static func withTwoStores(
        adjusting adjust: (inout PostgresConfiguration) -> Void = { _ in },
        _ body: (PostgresDocumentStore, PostgresDocumentStore) async throws -> Void
    ) async throws {
        var configuration = try PostgresTestServer.freshConfiguration()
        adjust(&configuration)
        let other = try PostgresDocumentStore(configuration: configuration)
        try await PostgresTestServer.withStore(configuration) { first throws in
            try await PostgresTestServer.running(other) { second throws in try await body(first, second) }
        }
    }

    @Test("Two stores writing at once: each store's feed has every commit of both, in commit order, each once")
    func interleavedWriters() async throws {
        try await Self.withTwoStores { first, second in
            // Both run before either writes: their feeds start at commit 0.
            _ = try await first.read { try $0.commitNumber() }
            _ = try await second.read { try $0.commitNumber() }
            let (firstFeed, secondFeed) = (CommitRecorder(first.changes), CommitRecorder(second.changes))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (name, store) in [("first", first), ("second", second)] {
                    group.addTask {
                        for index in 0..<40 {
                            try await store.upsert(
                                ["_id": .string("\(name)-\(index)"), "n": .number(Double(index))], into: "items")
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await firstFeed.expectContiguous(to: 80, "the first store")
            try await secondFeed.expectContiguous(to: 80, "the second store")
            let count = try await second.read { try $0.count(matching: DocumentQuery(collection: "items")) }
            #expect(count == 80)
        }
    }

    @Test("A store that only reads learns of the other's commits through the log, with their changes")
    func readerLearnsChanges() async throws {
        try await Self.withTwoStores { writer, reader in
            _ = try await reader.read { try $0.commitNumber() }
            let sets = LockedValue<[ChangeSet]>([])
            let subscription = reader.changes.subscribeInline({ set in sets.withLock { $0.append(set) } }, finished: {})
            try await writer.write { transaction in
                try transaction.upsert(["_id": "a", "v": 1], into: "items")
                try transaction.upsert(["_id": "b", "v": 2], into: "other")
            }
            try await writer.remove(id: "a", from: "items")
            try await eventually { sets.withLock { $0.count } >= 2 }
            let received = sets.withLock { $0 }
            #expect(received.map(\.commits) == [1...1, 2...2])
            #expect(
                received.first?.changes == [
                    ChangeSet.Key(collection: "items", id: "a"): .inserted,
                    ChangeSet.Key(collection: "other", id: "b"): .inserted,
                ])
            #expect(received.last?.changes == [ChangeSet.Key(collection: "items", id: "a"): .removed])
            subscription.cancel()
        }
    }

    @Test("The listener's connection is terminated by the server: it reconnects and catches up, skipping nothing")
    func listenerTerminated() async throws {
        try await Self.withTwoStores(adjusting: { $0.reconnectDelay = .milliseconds(20) }) { writer, reader in
            _ = try await reader.read { try $0.commitNumber() }
            let feed = CommitRecorder(reader.changes)
            for index in 0..<10 { try await writer.upsert(["_id": .string("a\(index)")], into: "items") }
            try await feed.expectContiguous(to: 10, "before the fault")
            // Every LISTENing backend of this schema's channel: the two stores' listeners.
            let terminated = try await PostgresTestServer.execute(
                """
                SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity
                WHERE query LIKE 'LISTEN%\(writer.configuration.schema)%' AND pid <> pg_backend_pid()
                """)
            #expect(terminated.count == 2, "both listeners were found: \(terminated)")
            for index in 10..<30 { try await writer.upsert(["_id": .string("a\(index)")], into: "items") }
            try await feed.expectContiguous(to: 30, "after the fault")
        }
    }

    @Test("A commit whose NOTIFY never came still reaches the other store, by the periodic catch-up")
    func missedNotification() async throws {
        try await Self.withTwoStores(adjusting: { $0.catchUpInterval = .milliseconds(50) }) { writer, reader in
            _ = try await reader.read { try $0.commitNumber() }
            let feed = CommitRecorder(reader.changes)
            try await writer.upsert(["_id": "a"], into: "items")
            try await feed.expectContiguous(to: 1, "before")
            // A writer that commits as the store does but sends no NOTIFY (another version, a bug, a lost packet).
            let schema = writer.configuration.schema
            try await PostgresTestServer.execute(
                """
                WITH commit AS (UPDATE \(schema).tether_meta SET value = value + 1 WHERE key = 'commit' RETURNING value),
                document AS (INSERT INTO \(schema).tether_documents (collection, id, body)
                    VALUES ('items', 'silent', '{"_id": "silent"}'::jsonb) RETURNING id)
                INSERT INTO \(schema).tether_change_log (commit_number, changes)
                SELECT value, '{"items":{"silent":"i"}}' FROM commit, document RETURNING commit_number::text
                """)
            try await feed.expectContiguous(to: 2, "after the silent commit")
            // And the writing store itself, at its next commit, publishes the silent one first.
            try await writer.upsert(["_id": "b"], into: "items")
            let writerCommits = try await writer.read { try $0.commitNumber() }
            #expect(writerCommits == 3)
            try await feed.expectContiguous(to: 3, "after the next commit")
        }
    }
}
