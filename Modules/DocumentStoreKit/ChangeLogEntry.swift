public import PersistenceKit
import TetherJSON

/// One commit as a store's change log keeps it: the commit's number and what it changed. A store that several
/// processes share writes one entry per commit, in the commit's own transaction, so that every process can bring the
/// commits of the others into its ``ChangeFeed`` in order and miss none (``ChangeLogPublisher``).
///
/// The text form is compact JSON, the same on every store: `{"items":{"a1":"i","b2":"u","c3":"r"}}` — per collection,
/// each changed `_id` with `i`nserted, `u`pdated or `r`emoved.
public struct ChangeLogEntry: Sendable, Hashable {
    /// The commit's number.
    public let commit: UInt64
    /// What the commit changed.
    public let changes: [ChangeSet.Key: ChangeSet.Kind]
    /// The changed documents as the commit left them, when the process that made it has them at hand — for its
    /// own feed (``ChangeSet/documents``). Never written to the log; not compared.
    public let documents: [ChangeSet.Key: StoredDocument]?

    /// Makes an entry.
    public init(
        commit: UInt64, changes: [ChangeSet.Key: ChangeSet.Kind], documents: [ChangeSet.Key: StoredDocument]? = nil
    ) {
        self.commit = commit
        self.changes = changes
        self.documents = documents
    }

    /// Equal when the commit and its changes are (the documents are a copy of what the store holds).
    public static func == (lhs: ChangeLogEntry, rhs: ChangeLogEntry) -> Bool {
        lhs.commit == rhs.commit && lhs.changes == rhs.changes
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(commit)
        hasher.combine(changes)
    }

    /// The changes as the log stores them.
    public var encodedChanges: String {
        var collections: [String: [String: JSONValue]] = [:]
        for (key, kind) in changes { collections[key.collection, default: [:]][key.id] = .string(kind.letter) }
        return JSONValue.object(collections.mapValues { JSONValue.object($0) }).jsonText
    }

    /// Reads an entry from the log's text form.
    ///
    /// - Throws: `PersistenceError.Kind.corrupt` naming the commit when the text is not an entry.
    public init(commit: UInt64, encodedChanges text: String) throws(PersistenceError) {
        let corrupt = { (why: String) in
            PersistenceError(.corrupt, "change log entry \(commit) cannot be read: \(why)")
        }
        let parsed: JSONValue
        do {
            parsed = try JSONValue(parsing: text)
        } catch {
            throw corrupt("\(error)")
        }
        guard case .object(let collections) = parsed else { throw corrupt("not an object") }
        var changes: [ChangeSet.Key: ChangeSet.Kind] = [:]
        for (collection, ids) in collections {
            guard case .object(let kinds) = ids else { throw corrupt("'\(collection)' does not map ids to kinds") }
            for (id, letter) in kinds {
                guard case .string(let letter) = letter, let kind = ChangeSet.Kind(letter: letter) else {
                    throw corrupt("'\(collection)'.'\(id)' is not one of i, u, r")
                }
                changes[ChangeSet.Key(collection: collection, id: id)] = kind
            }
        }
        self.init(commit: commit, changes: changes)
    }
}

extension ChangeSet.Kind {
    fileprivate var letter: String {
        switch self {
        case .inserted: "i"
        case .updated: "u"
        case .removed: "r"
        }
    }

    fileprivate init?(letter: String) {
        switch letter {
        case "i": self = .inserted
        case "u": self = .updated
        case "r": self = .removed
        default: return nil
        }
    }
}
