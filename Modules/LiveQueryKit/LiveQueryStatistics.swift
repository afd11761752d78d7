/// Counts that show how much work live queries cost.
public struct LiveQueryStatistics: Sendable, Hashable {
    /// Queries run against the store (initial results and re-evaluations).
    public var evaluations = 0
    /// Results brought up to date from the changed documents alone, without running the query.
    public var incrementalUpdates = 0
    /// Commits' changes that touched an observed collection but could not affect a query's result, so it was not
    /// run again.
    public var skippedIrrelevant = 0
    /// Observers registered now.
    public var observers = 0
    /// Distinct queries observed now (identical queries share one evaluation).
    public var queries = 0
    /// Evaluations that failed (each delivered to the query's observers' `onError:`).
    public var failures = 0
    /// Rounds of work the engine's consumer has done: each takes every change committed since the previous one
    /// (merged) and every observer registered since.
    public var rounds = 0
    /// The last commit the live queries have caught up with (see `Store.waitForLiveQueries(through:)`).
    public var caughtUpCommit: UInt64 = 0
}
