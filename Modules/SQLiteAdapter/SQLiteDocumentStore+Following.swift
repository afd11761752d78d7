import DocumentStoreKit
import Foundation
import GRDB
import Logging
import PersistenceKit

extension SQLiteDocumentStore {
    /// Brings the commits that other processes make to this file into this store's change feed — and so to its
    /// live queries — in commit order, each once, until the calling task is cancelled. Run it where long-lived work
    /// runs (a task group beside your app's other services, or PipelineKit's service group):
    ///
    /// ```swift
    /// let store = try SQLiteDocumentStore(path: "shared.sqlite")
    /// try await withThrowingDiscardingTaskGroup { group in
    ///     group.addTask { try await store.followOtherProcesses() }
    ///     // … observe live queries on `Store(documents: store)` …
    /// }
    /// ```
    ///
    /// Every commit appends an entry to the file's change log in its own transaction; this reads the log after the
    /// last commit published here every `interval` (SQLite has no cross-process notification; a read of the log's
    /// new entries costs microseconds). Writes made here need no follower: each also publishes, at its commit, the
    /// other processes' commits before it. While it runs, the process is registered as a reader of the log, and
    /// entries are pruned only once it has passed them — or once it has not been seen for
    /// ``SQLiteConfiguration/changeLogRetention``.
    ///
    /// - Throws: `CancellationError` when cancelled (after unregistering), or a
    ///   `PersistenceError` when the file cannot be read.
    public func followOtherProcesses(checkingEvery interval: Duration = .milliseconds(50)) async throws {
        let reader = UUID().uuidString
        let (publisher, configuration) = (publisher, configuration)
        let logger = configuration.logger
        let clock = ContinuousClock()
        do {
            try await pool.write { db in
                try SQLiteChangeLog.register(reader, position: publisher.lastPublished, in: db, now: Date())
            }
            var registered = clock.now
            while true {
                try await Task.sleep(for: interval)
                let after = publisher.lastPublished
                let entries = try await pool.read { db in try SQLiteChangeLog.entries(after: after, in: db) }
                let outcome = publisher.publish(entries)
                if let missing = outcome.missing {
                    // Nothing is lost — they went to the feed as unknown changes, and live queries run again — but
                    // this process was away longer than the log keeps entries for it: worth a line.
                    logger.warning(
                        "commits were pruned from the change log before this process read them; live queries run again",
                        metadata: ["file": "\(path)", "commits": "\(missing.lowerBound)...\(missing.upperBound)"])
                }
                if clock.now - registered >= .seconds(1) {
                    // Say how far this process has read, and prune what every live reader has passed.
                    try await pool.write { db in
                        let now = Date()
                        try SQLiteChangeLog.register(reader, position: publisher.lastPublished, in: db, now: now)
                        try SQLiteChangeLog.prune(
                            in: db, now: now, retention: configuration.changeLogRetention,
                            minimumAge: configuration.changeLogMinimumAge)
                    }
                    registered = clock.now
                }
            }
        } catch {
            // No longer a reader: entries need not wait for this process. A task of its own, since this one is
            // cancelled and GRDB refuses to start work for a cancelled task.
            let pool = pool
            await Task.detached { try? await pool.write { db in try SQLiteChangeLog.unregister(reader, in: db) } }.value
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            throw PersistenceError.mapping(error, file: path)
        }
    }

    /// How many entries the file's change log holds now.
    public func changeLogCount() async throws -> Int {
        do {
            return try await pool.read { db in try SQLiteChangeLog.count(in: db) }
        } catch {
            throw PersistenceError.mapping(error, file: path)
        }
    }
}
