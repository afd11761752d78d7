import DocumentStoreKit

/// The change sets committed since the engine's consumer last looked, as the writer handed them over.
///
/// - A set that comes while a query can take a result (``append(_:)``) is appended: the consumer, woken for it,
///   merges the sets on its own thread, so that the hand-over costs the writer an append rather than a merge
///   (hashing every changed key and document into the kept set).
/// - A set kept while every query is held back (``keep(_:)``) is merged at once into the last one pending, on the
///   writer's thread. Nothing is woken for it, so nothing else would merge it before the next round; and the document
///   it supersedes is let go where it was made. Appended instead, the kept sets' documents were let go by the
///   consumer's thread when it folded them, every ``limit`` commits, which cost the writer more than the merge does
///   (Docs/LiveQueryBenchmarkLog.md, "What the writer pays for being observed").
///
/// Memory stays flat however long the consumer does not look: once ``limit`` sets, or sets with
/// `ChangeSet.documentLimit` changed documents between them, are kept unmerged, they are folded into one — a merged set
/// keeps each document once, as the last commit left it, and no more than that limit (``isFull`` says when, so that
/// the engine can wake a parked consumer to fold them; otherwise the next ``append(_:)`` does).
struct PendingChanges: Sendable {
    /// The earliest sets, merged into one: the first set handed over (so that a round taking a single commit's set,
    /// the usual case, costs no array), and every set folded in since.
    private var folded: ChangeSet?
    /// The sets handed over since, in commit order; sets kept after the last one are merged into it (``keep(_:)``).
    private var sets: [ChangeSet] = []
    /// The changed documents the appended `sets` reported between them (a document changed by two commits counts
    /// twice). Sets merged in by ``keep(_:)`` are not counted: a merged set bounds its own documents.
    private var changeCount = 0
    /// Whether every set pending was kept while every query was held back, and counted as held back then
    /// (``LiveQueryStatistics/deferrals``): a round that holds them back again does not count them twice.
    private(set) var wereAllHeldBack = true
    /// The sets appended and not yet counted as held back (see ``countAsHeldBack()``).
    private var uncountedSets = 0
    /// Sets kept, or counted as held back, since the engine last checked for dead owners or these were taken: a round
    /// that only sweeps takes nothing, and leaves the count (see ``isCheckDue(every:)``).
    private var heldSinceCheck = 0

    /// How many sets are kept unmerged (a few hundred bytes each, with the documents they carry).
    static let limit = 256

    /// Whether no set is pending.
    var isEmpty: Bool { folded == nil }

    /// The first commit pending, if any.
    var firstCommit: UInt64? { folded?.commits.lowerBound }

    /// Whether the sets kept unmerged are at their bound: the next ``append(_:)`` folds them.
    var isFull: Bool { sets.count >= Self.limit || changeCount >= ChangeSet.documentLimit }

    /// Appends a commit's set that came while a query could take a result, folding the kept ones first when they
    /// are at their bound.
    mutating func append(_ set: ChangeSet) {
        wereAllHeldBack = false
        uncountedSets += 1
        guard folded != nil else {
            folded = set
            return
        }
        if isFull { fold() }
        sets.append(set)
        changeCount += set.changes.count
    }

    /// Keeps a commit's set that came while every query was held back: merged into the last set pending, in commit
    /// order (a merged set bounds its own documents). The first set pending is kept as it is.
    mutating func keep(_ set: ChangeSet) {
        heldSinceCheck += 1
        if sets.isEmpty {
            guard folded != nil else {
                folded = set
                return
            }
            Self.merge(set, into: &folded!)
        } else {
            Self.merge(set, into: &sets[sets.count - 1])
        }
    }

    /// Room a set that commits are kept in starts with: a burst's sets grow into it without rehashing every key at
    /// each doubling from a single commit's size (a few kilobytes).
    static let keptCapacity = 64

    private static func merge(_ set: ChangeSet, into kept: inout ChangeSet) {
        if kept.changes.capacity < keptCapacity { kept.reserveCapacity(keptCapacity) }
        kept.merge(set)
    }

    /// Counts the appended sets as held back, now that the consumer keeps them rather than running a round — they came
    /// while a round ran, before it held every query back: returns how many, and from then on every set pending counts
    /// as held back (``wereAllHeldBack``), as those ``keep(_:)`` merges in are counted as they come.
    mutating func countAsHeldBack() -> Int {
        defer {
            heldSinceCheck += uncountedSets
            uncountedSets = 0
            wereAllHeldBack = true
        }
        return uncountedSets
    }

    /// Whether `count` sets have been held back since the last check for dead owners (or since these changes were
    /// taken), starting the count again if so (``LiveQueryEngine/heldCommitsPerCheck``).
    mutating func isCheckDue(every count: Int) -> Bool {
        guard heldSinceCheck >= count else { return false }
        heldSinceCheck = 0
        return true
    }

    /// Everything pending, merged in commit order; nil when nothing is. Called on a copy, outside the engine's lock.
    func merged() -> ChangeSet? {
        var pending = self
        return pending.takeMerged()
    }

    /// Takes everything pending, merged in commit order, leaving nothing pending. Taken out first, the first set's
    /// tables are merged into in place when nothing else shares them (a round's own copy of the inbox's sets).
    mutating func takeMerged() -> ChangeSet? {
        guard var merged = folded.take() else { return nil }
        if !sets.isEmpty { merged.reserveCapacity(merged.changes.count + changeCount) }
        for set in sets { merged.merge(set) }
        sets.removeAll(keepingCapacity: true)
        changeCount = 0
        return merged
    }

    private mutating func fold() {
        folded = takeMerged()
    }
}
