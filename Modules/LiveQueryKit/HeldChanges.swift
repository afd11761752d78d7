import DocumentStoreKit

/// The changes held back for a query while every one of its observers is busy with an earlier result (see
/// ``LiveQueryEngine/hold(_:_:counting:schedulingAhead:in:)``): merged commit after commit, applied all at once when
/// one of them is ready.
///
/// Memory stays flat however long the observers stay busy: past ``LiveQueryEngine/relevanceCheckLimit`` changed
/// documents the set keeps only which commits it spans, and the query simply runs again — counted as
/// ``LiveQueryStatistics/Reruns/manyChanges``, since that is why.
struct HeldChanges: Sendable {
    /// What the held-back commits changed: unknown once past the limit (or when a commit's changes were unknown).
    private(set) var changes: ChangeSet
    /// Whether the changes were dropped for being more than the limit, rather than unknown from the store.
    private(set) var isPastLimit = false

    init(_ changes: ChangeSet) {
        self.changes = changes
        dropPastLimit()
    }

    /// Merges the changes of a later commit.
    mutating func merge(_ later: ChangeSet) {
        changes.merge(later)
        if later.hasUnknownChanges { isPastLimit = false }
        dropPastLimit()
    }

    /// Why the query runs again when the held-back changes are unknown.
    var unknownReason: LiveQueryStatistics.RerunReason {
        isPastLimit ? .manyChanges : .unknownChanges
    }

    private mutating func dropPastLimit() {
        guard changes.changes.count > LiveQueryEngine.relevanceCheckLimit else { return }
        if !changes.hasUnknownChanges { isPastLimit = true }
        changes = ChangeSet(unknownChangesIn: changes.commits)
    }
}
