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
    /// Each collection's changed documents as the read found them, by `_id` (a removed document is absent).
    var found: [String: [String: StoredDocument]] = [:]
    /// Each collection's changed `_id`s and how they changed, over ``changes``.
    var changed: [String: [String: ChangeSet.Kind]] = [:]
    /// Collections with more changes than ``LiveQueryEngine/relevanceCheckLimit``: not read.
    var tooMany: Set<String> = []
    /// For each collection read, what tells whether a result can change: the changed `_id`s and the bodies found.
    /// Laid out once per round, to be checked against every query of the collection.
    private(set) var relevance: [String: Relevance] = [:]

    struct Relevance: Sendable {
        var ids: [String]
        var bodies: [JSONValue]
    }

    /// Whether ``changes`` covers every commit up to ``commit``: whether results can be brought up to it.
    var coversCommit: Bool { commit <= changes.commits.upperBound }

    /// Records what `collection`'s changes were, and the documents found for them.
    mutating func record(_ changed: [String: ChangeSet.Kind], found: [String: StoredDocument], in collection: String) {
        self.changed[collection] = changed
        self.found[collection] = found
        relevance[collection] = Relevance(ids: Array(changed.keys), bodies: found.values.map(\.body))
    }
}

extension ChangedDocuments {
    /// The documents `changes` carries (``ChangeSet/documents``: the writer in this process passed them on), as
    /// the last of its commits left them; nil when it carries none.
    init?(carriedBy changes: ChangeSet, in collections: Set<String>) {
        guard let documents = changes.documents, !changes.hasUnknownChanges else { return nil }
        self.init(commit: changes.commits.upperBound, changes: changes)
        for collection in collections {
            let changed = changes.changes(in: collection)
            guard changed.count <= LiveQueryEngine.relevanceCheckLimit else {
                self.changed[collection] = changed
                tooMany.insert(collection)
                continue
            }
            var found: [String: StoredDocument] = [:]
            for id in changed.keys {
                if let document = documents[ChangeSet.Key(collection: collection, id: id)] { found[id] = document }
            }
            record(changed, found: found, in: collection)
        }
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
                let changed = read.changes.changes(in: collection)
                guard changed.count <= Self.relevanceCheckLimit else {
                    read.changed[collection] = changed
                    read.tooMany.insert(collection)
                    continue
                }
                var found: [String: StoredDocument] = [:]
                for id in changed.keys {
                    if let document = try reader.document(id: id, in: collection) { found[id] = document }
                }
                read.record(changed, found: found, in: collection)
            }
            return read
        }
    }
}
