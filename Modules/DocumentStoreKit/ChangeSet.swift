/// What one or more commits changed: for each document touched, whether it was inserted, updated or removed.
///
/// A subscriber that falls behind receives one merged set for all the commits it missed (``commits`` says which):
/// every document touched in that span, with how it changed relative to the state before the first of them (a
/// document inserted and then removed in the span is reported as removed).
public struct ChangeSet: Sendable, Hashable {
    /// One changed document.
    public struct Key: Sendable, Hashable {
        /// The collection.
        public let collection: String
        /// The document's `_id`.
        public let id: String

        /// Makes a key.
        public init(collection: String, id: String) {
            self.collection = collection
            self.id = id
        }
    }

    /// How a document changed.
    public enum Kind: String, Sendable, Hashable {
        /// It did not exist before.
        case inserted
        /// It existed before and still does, with different content.
        case updated
        /// It existed before and no longer does.
        case removed
    }

    /// The store's commit numbers merged into this set: they count up by one per commit that changed something
    /// (a SQLite store carries on from the file's last number across restarts).
    public private(set) var commits: ClosedRange<UInt64>
    /// Each changed document and how it changed.
    public private(set) var changes: [Key: Kind]
    /// The changed documents as the last of ``commits`` left them, by key (a removed document has none), when the
    /// process that committed them passed them on — so that a consumer need not read them back. Nil when not known:
    /// commits made by another process (read from a change log), or more than ``documentLimit`` documents.
    ///
    /// A copy of what the store holds, not a part of what changed: two sets that report the same changes to the same
    /// commits are equal whether they carry the documents or not.
    public private(set) var documents: [Key: StoredDocument]?
    /// The most documents a set carries (see ``documents``): a commit that changes more carries none, so that a
    /// bulk import does not hold a second copy of what it wrote.
    public static let documentLimit = 512
    /// True when what some of ``commits`` changed is not known — they were pruned from a store's change log before
    /// this process read them (it was stopped for longer than the log keeps entries): any document may have changed,
    /// and a consumer must read again what it shows. ``changes`` then holds only the changes that are known.
    public private(set) var hasUnknownChanges: Bool

    /// Makes the set for one commit, with the changed documents as it left them when they are at hand (see
    /// ``documents``; more than ``documentLimit`` are dropped).
    public init(commit: UInt64, changes: [Key: Kind], documents: [Key: StoredDocument]? = nil) {
        self.commits = commit...commit
        self.changes = changes
        self.hasUnknownChanges = false
        self.documents = documents.flatMap { $0.count <= Self.documentLimit ? $0 : nil }
    }

    /// Makes the set for commits whose changes are not known (see ``hasUnknownChanges``).
    public init(unknownChangesIn commits: ClosedRange<UInt64>) {
        self.commits = commits
        self.changes = [:]
        self.hasUnknownChanges = true
        self.documents = nil
    }

    /// The collections with a change.
    public var collections: Set<String> {
        // A set's changes are nearly always in one collection: each key is compared with the last one's, and only a
        // different collection is hashed.
        var collections: Set<String> = []
        var last: String?
        for key in changes.keys where key.collection != last {
            collections.insert(key.collection)
            last = key.collection
        }
        return collections
    }

    /// The changes in `collection`, by `_id`.
    public func changes(in collection: String) -> [String: Kind] {
        var result: [String: Kind] = [:]
        for (key, kind) in changes where key.collection == collection { result[key.id] = kind }
        return result
    }

    /// Whether nothing changed (everything in the merged commits cancelled out, and nothing is unknown).
    public var isEmpty: Bool { changes.isEmpty && !hasUnknownChanges }

    /// Folds a later set into this one. Every document either touched is in the result: a consumer whose view is
    /// somewhere inside the merged span must still hear of it. So a document inserted and later removed is reported
    /// as ``Kind/removed`` (it may not have existed before), never dropped; otherwise the kinds combine as
    /// ``Kind/merging(_:then:)`` says.
    public mutating func merge(_ later: ChangeSet) {
        commits = min(commits.lowerBound, later.commits.lowerBound)...max(commits.upperBound, later.commits.upperBound)
        hasUnknownChanges = hasUnknownChanges || later.hasUnknownChanges
        for (key, kind) in later.changes {
            // One lookup — a second only when the merged kind is not the later one (inserted then updated, removed
            // then inserted); a document updated again, the usual case, takes one.
            guard let earlier = changes.updateValue(kind, forKey: key) else { continue }
            let merged = Kind.merging(earlier, then: kind) ?? .removed
            if merged != kind { changes[key] = merged }
        }
        // The documents are known after the merge only if both sets knew theirs: the later set's replace the
        // earlier's, and a document the later set removed has none.
        // Taken out, so that it is updated in place rather than copied.
        if var documents = documents.take(), let laterDocuments = later.documents, !hasUnknownChanges {
            for (key, kind) in later.changes where kind == .removed { documents[key] = nil }
            for (key, document) in laterDocuments { documents[key] = document }
            self.documents = documents.count <= Self.documentLimit ? documents : nil
        }
    }

    /// Makes room for `count` changed documents, so that merging that many later sets into this one grows its
    /// tables once rather than doubling them, rehashing every key each time, from a single commit's size.
    public mutating func reserveCapacity(_ count: Int) {
        changes.reserveCapacity(count)
        documents?.reserveCapacity(min(count, Self.documentLimit))
    }

    /// Equal when they report the same changes to the same commits, carried ``documents`` or not.
    public static func == (lhs: ChangeSet, rhs: ChangeSet) -> Bool {
        lhs.commits == rhs.commits && lhs.changes == rhs.changes && lhs.hasUnknownChanges == rhs.hasUnknownChanges
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(commits)
        hasher.combine(changes)
        hasher.combine(hasUnknownChanges)
    }
}

extension ChangeSet.Kind {
    /// What `earlier` followed by `later` amounts to within one commit; nil when they cancel out (inserted, then
    /// removed — the commit does not touch the document at all).
    public static func merging(_ earlier: ChangeSet.Kind?, then later: ChangeSet.Kind) -> ChangeSet.Kind? {
        switch (earlier, later) {
        case (nil, _): later
        case (.inserted?, .removed): nil
        case (.inserted?, _): .inserted
        case (.removed?, .removed): .removed
        case (.removed?, _): .updated
        case (.updated?, .removed): .removed
        case (.updated?, _): .updated
        }
    }
}
