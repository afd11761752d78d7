import DocumentStoreKit
import TetherConcurrency
import TetherJSON

/// The documents a round's changes touched, for every observed collection they touched: what brings the observed
/// results up to date without running their queries. Commits made in this process carry their documents (see
/// ``ChangeSet/documents``), and nothing is read; others' are read together, in one read of the store.
///
/// The read sees the store at ``commit``, which may be later than the round's last commit: a writer went on while
/// the round ran. Those later commits' changes are already in the engine's inbox, or are on their way there; when
/// the inbox holds every one of them, they are read too (``changes`` then covers ``commit``), so the results are
/// brought up to date to the read's commit instead of being run again. They stay in the inbox: the next round
/// applies them once more, which changes nothing that is already applied.
struct ChangedDocuments: Sendable {
    /// The commit the read saw.
    var commit: UInt64
    /// The round's changes, and the inbox's later ones when the read saw later commits and the inbox held them all.
    var changes: ChangeSet
    /// Each collection read: what its changes touched. Laid out once per round, to be checked against every query
    /// of the collection and merged into each result they alter.
    private(set) var collections: [String: Changed] = [:]
    /// Collections with more changes than ``LiveQueryEngine/relevanceCheckLimit``: not read.
    var tooMany: Set<String> = []

    /// One collection's changed documents.
    struct Changed: Sendable {
        /// The changed `_id`s, a removed document's too.
        var ids: Set<String> = []
        /// The changed documents as the read found them, by `_id` (a removed document is absent).
        var found: [String: StoredDocument] = [:]
        /// The found documents' bodies, for checking a query's predicate against each.
        var bodies: [JSONValue] = []

        init(capacity: Int) {
            ids.reserveCapacity(capacity)
            found.reserveCapacity(capacity)
            bodies.reserveCapacity(capacity)
        }

        /// Records a changed `_id`, and the document as it now is (nil: removed, or not found).
        mutating func record(_ id: String, _ document: StoredDocument?) {
            ids.insert(id)
            guard let document else { return }
            found[id] = document
            bodies.append(document.body)
        }
    }

    /// Whether ``changes`` covers every commit up to ``commit``: whether results can be brought up to it.
    var coversCommit: Bool { commit <= changes.commits.upperBound }

    /// Records the `_id`s ``changes`` touched in `collection`, each document as `document` finds it — or, past
    /// ``LiveQueryEngine/relevanceCheckLimit``, notes the collection as ``tooMany``. One pass over the changes, with
    /// room made up front: a round of a hundred changed documents hashes each `_id` once per table it goes into, and
    /// grows none.
    mutating func record(
        _ collection: String, document: (ChangeSet.Key) throws -> StoredDocument?
    ) rethrows {
        let count = changes.changes.keys.lazy.filter { $0.collection == collection }.count
        guard count <= LiveQueryEngine.relevanceCheckLimit else {
            tooMany.insert(collection)
            return
        }
        var changed = Changed(capacity: count)
        for key in changes.changes.keys where key.collection == collection {
            changed.record(key.id, try document(key))
        }
        collections[collection] = changed
    }
}

extension ChangedDocuments {
    /// The documents `changes` carries (``ChangeSet/documents``: the writer in this process passed them on), as
    /// the last of its commits left them; nil when it carries none.
    init?(carriedBy changes: ChangeSet, in collections: Set<String>) {
        guard let documents = changes.documents, !changes.hasUnknownChanges else { return nil }
        self.init(commit: changes.commits.upperBound, changes: changes)
        for collection in collections { record(collection) { documents[$0] } }
    }
}

extension LiveQueryEngine {
    /// Reads, in one read, every document `changes` touched in `collections` — with the changes the inbox holds
    /// since, when the read sees commits after `changes`'.
    func readChanged(_ changes: ChangeSet, reading collections: Set<String>) async throws -> ChangedDocuments {
        try await documents.read { [state] reader in
            let commit = try reader.commitNumber()
            var read = ChangedDocuments(commit: commit, changes: changes)
            if commit > changes.commits.upperBound, let later = state.withLock({ $0.inbox.changes }).merged(),
                !later.hasUnknownChanges, later.commits.lowerBound <= changes.commits.upperBound + 1,
                later.commits.upperBound >= commit
            {
                read.changes.merge(later)
            }
            for collection in collections {
                // Every changed document is read, a removed one too: one removed in a commit after the read's may
                // still be there at the read's commit.
                try read.record(collection) { try reader.document(id: $0.id, in: collection) }
            }
            return read
        }
    }
}
