import DocumentStoreKit
import GRDB
import TetherConcurrency

/// Builds the change feed from GRDB's transaction observation. The store's transaction records, for each write,
/// which document it meant to change and on which row; SQLite's row events confirm which rows really changed; at
/// commit the confirmed changes are published, at rollback everything is dropped. So the feed reports exactly what
/// was committed.
final class ChangeTracker: TransactionObserver, Sendable {
    /// What the transaction's writes did to one document.
    struct Change: Sendable {
        /// What the writes meant to do, merged in order; nil when they cancel out (inserted, then removed).
        var kind: ChangeSet.Kind?
        /// The document as the writes left it (nil once removed): the feed's copy.
        var document: StoredDocument?
        /// The row the first write touched, and any other (a document removed, then written again).
        var row: Int64
        var otherRows: [Int64] = []

        /// Adds a later write's change.
        mutating func add(_ later: ChangeSet.Kind, _ document: StoredDocument?, row: Int64) {
            kind = ChangeSet.Kind.merging(kind, then: later)
            self.document = document
            if row != self.row, !otherRows.contains(row) { otherRows.append(row) }
        }

        /// Whether SQLite reported one of its rows as changed.
        func isConfirmed(by changedRows: Set<Int64>) -> Bool {
            changedRows.contains(row) || otherRows.contains { changedRows.contains($0) }
        }
    }

    struct Pending: Sendable {
        /// Each document the transaction wrote: one entry, so that a write costs one lookup.
        var changes: [ChangeSet.Key: Change] = [:]
        /// The rows SQLite reported as changed.
        var changedRows: Set<Int64> = []
        /// The last row event: how the last statement changed which row.
        var lastEvent: (kind: DatabaseEvent.Kind, row: Int64)?
        /// What goes to the feed at commit: other processes' commits between the last one published here and this
        /// one (from the change log), then this one's entry.
        var entries: [ChangeLogEntry] = []

        /// What the transaction changed so far: each intended change whose rows SQLite reported as changed.
        var confirmed: [ChangeSet.Key: ChangeSet.Kind] {
            var confirmed: [ChangeSet.Key: ChangeSet.Kind] = [:]
            for (key, change) in changes {
                if let kind = change.kind, change.isConfirmed(by: changedRows) { confirmed[key] = kind }
            }
            return confirmed
        }

        /// The confirmed changes' documents, unless there are more than a change set carries.
        func documents(of confirmed: [ChangeSet.Key: ChangeSet.Kind]) -> [ChangeSet.Key: StoredDocument]? {
            guard confirmed.count <= ChangeSet.documentLimit else { return nil }
            var documents: [ChangeSet.Key: StoredDocument] = [:]
            for key in confirmed.keys { if let document = changes[key]?.document { documents[key] = document } }
            return documents
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
            pending.changes[key, default: Change(kind: nil, document: nil, row: row)].add(kind, document, row: row)
        }
    }

    /// Whether the transaction has recorded a change.
    var hasIntents: Bool {
        pending.withLock { pending in pending.changes.values.contains { $0.kind != nil } }
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
