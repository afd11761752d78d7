import DocumentStoreKit
import GRDB
import TetherConcurrency

/// Builds the change feed from GRDB's transaction observation. The store's transaction records, for each write,
/// which document it meant to change and on which row; SQLite's row events confirm which rows really changed; at
/// commit the confirmed changes are published, at rollback everything is dropped. So the feed reports exactly what
/// was committed.
final class ChangeTracker: TransactionObserver, Sendable {
    struct Pending: Sendable {
        /// What each write meant to do, per document, merged in order.
        var intents: [ChangeSet.Key: ChangeSet.Kind] = [:]
        /// Each document as the transaction's writes left it (none once removed): the feed's copy.
        var documents: [ChangeSet.Key: StoredDocument] = [:]
        /// The rows each document's writes touched.
        var rows: [ChangeSet.Key: Set<Int64>] = [:]
        /// The rows SQLite reported as changed.
        var changedRows: Set<Int64> = []
        /// The last row event: how the last statement changed which row.
        var lastEvent: (kind: DatabaseEvent.Kind, row: Int64)?
        /// What goes to the feed at commit: other processes' commits between the last one published here and this
        /// one (from the change log), then this one's entry.
        var entries: [ChangeLogEntry] = []

        /// What the transaction changed so far: each intended change whose rows SQLite reported as changed.
        var confirmed: [ChangeSet.Key: ChangeSet.Kind] {
            var changes: [ChangeSet.Key: ChangeSet.Kind] = [:]
            for (key, kind) in intents where !(rows[key] ?? []).isDisjoint(with: changedRows) { changes[key] = kind }
            return changes
        }

        /// The confirmed changes' documents, unless there are more than a change set carries.
        func documents(of confirmed: [ChangeSet.Key: ChangeSet.Kind]) -> [ChangeSet.Key: StoredDocument]? {
            guard confirmed.count <= ChangeSet.documentLimit else { return nil }
            return documents.filter { confirmed[$0.key] != nil }
        }
    }

    let publisher: ChangeLogPublisher
    let pending = LockedValue(Pending())

    init(publisher: ChangeLogPublisher) {
        self.publisher = publisher
    }

    /// Called by the transaction, on the writer queue, after each write: `document` is what it wrote (nil for a
    /// removal).
    func record(_ kind: ChangeSet.Kind, _ key: ChangeSet.Key, row: Int64, document: StoredDocument?) {
        pending.withLock { pending in
            pending.intents[key] = ChangeSet.Kind.merging(pending.intents[key], then: kind)
            pending.documents[key] = document
            pending.rows[key, default: []].insert(row)
        }
    }

    /// Whether the transaction has recorded a change.
    var hasIntents: Bool {
        pending.withLock { !$0.intents.isEmpty }
    }

    /// Sets the number the commit will be published under, and the other processes' commits to publish before it;
    /// returns the commit's entry, for the change log.
    func setCommit(_ commit: UInt64, after preceding: [ChangeLogEntry]) -> ChangeLogEntry {
        pending.withLock { pending in
            let confirmed = pending.confirmed
            let entry = ChangeLogEntry(commit: commit, changes: confirmed, documents: pending.documents(of: confirmed))
            pending.entries = preceding + [entry]
            return entry
        }
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        eventKind.tableName == DocumentSchema.table
    }

    func databaseDidChange(with event: DatabaseEvent) {
        let (row, kind) = (event.rowID, event.kind)
        pending.withLock { pending in
            pending.changedRows.insert(row)
            pending.lastEvent = (kind, row)
        }
    }

    /// Runs `statement` and returns the row event it caused, if any (an upsert that changed nothing causes none).
    func event(of statement: () throws -> Void) rethrows -> (kind: DatabaseEvent.Kind, row: Int64)? {
        pending.withLock { $0.lastEvent = nil }
        try statement()
        return pending.withLock { $0.lastEvent.take() }
    }

    func databaseDidCommit(_ db: Database) {
        let entries = pending.withLock { pending -> [ChangeLogEntry] in
            defer { pending = Pending() }
            return pending.entries
        }
        if !entries.isEmpty { publisher.publish(entries) }
    }

    func databaseDidRollback(_ db: Database) {
        pending.withLock { $0 = Pending() }
    }
}
