/// Counts that show how much work live queries cost.
public struct LiveQueryStatistics: Sendable, Hashable, Codable {
    /// Queries run against the store (initial results and re-evaluations).
    public var evaluations = 0
    /// Of the evaluations, those that re-ran a query already evaluated because its result could not be brought up to
    /// date from the changed documents, by reason: the full rescans to drive towards zero.
    public var reruns = Reruns()
    /// Results brought up to date from the changed documents alone, without running the query.
    public var incrementalUpdates = 0
    /// Changes held back because every observer was busy with an earlier result (a slow consumer): a round's
    /// changes held back for a query, or — while every observed query is held back — a commit kept without a round.
    /// They are applied together, once, when an observer is ready: a slow consumer costs one evaluation per
    /// delivery, not one per commit.
    public var deferrals = 0
    /// Times the writer went quiet while changes were held back, and the held-back queries were brought up to date
    /// then, so that an observer signalling afterwards takes the latest result at once (`Store`'s `quietPeriod`).
    public var quietCatchUps = 0
    /// Held-back queries brought up to date a little before a busy observer was due to signal — timed by how long
    /// the observers take over a result — so that the signal takes the latest result at once (`Store`'s
    /// `anticipatesSignals`).
    public var computedAhead = 0
    /// Computations ahead of a signal not made because the writer was still committing when they were due (a write
    /// was in flight, or it had committed within twice its mean interval between commits, 0.2 ms to 1 ms): the result
    /// would have been out of date at the signal, which computes the latest then, as it would have had to anyway.
    package var aheadLeftToSignal = 0
    /// Of ``aheadLeftToSignal``, those left because the writer was writing when they came due: a write was in flight
    /// through the store in this process — after its last commit the writer had paused longer than its
    /// window, in a commit checkpointing SQLite's write-ahead log, say, but had not stopped — or a commit came once it
    /// was due, before the timer ran, and cancelled the timer. (A commit within the window before the due time
    /// cancels the timer too, and is counted in ``aheadLeftToSignal`` alone.)
    package var aheadLeftWhileWriting = 0
    /// Reads of changed documents from the store, one per round at most. Commits made in this process carry their
    /// documents and need none; another process's commits (or one commit of more than 512 documents) do.
    public var changedDocumentReads = 0
    /// Commits' changes that touched an observed collection but could not affect a query's result, so it was not
    /// run again.
    public var skippedIrrelevant = 0
    /// Queries checked against a commit's changed documents. Those whose predicate requires a field to equal a
    /// value (`group == $args.g`, or an `IN`), and whose results hold none of the changed documents, are not checked
    /// unless a changed document has that value there: 1,000 queries of one shape cost a commit the few it reaches.
    public var relevanceChecks = 0
    /// Observers registered now.
    public var observers = 0
    /// Observers the engine knows to be idle now — the next result goes to them at once, and a commit is not held
    /// back while one is: for a test to wait on before it commits.
    package var idleObservers = 0
    /// Distinct queries observed now (identical queries share one evaluation).
    public var queries = 0
    /// Evaluations that failed (each delivered to the query's observers' `onError:`).
    public var failures = 0
    /// Failed queries run again after a wait, with no commit to run them (`Store`'s `retry`).
    public var retries = 0
    /// Rounds of work the engine's consumer has done: each takes every change committed since the previous one
    /// (merged) and every observer registered since.
    package var rounds = 0
    /// The last commit the live queries have caught up with (see `Store.waitForLiveQueries(through:)`).
    public var caughtUpCommit: UInt64 = 0

    /// Why queries were run again instead of brought up to date from the changed documents.
    public struct Reruns: Sendable, Hashable, Codable {
        /// The read of the changed documents saw later commits than the change set's last, whose changes had not yet
        /// reached the engine (another process committed them, or their publication had not yet arrived).
        public var laterCommit = 0
        /// The query has an offset: which documents fall before it is not known from the result.
        public var offset = 0
        /// A document left a full window, which must be refilled from the store.
        public var windowRefill = 0
        /// The change set named more documents than the engine reads one by one.
        public var manyChanges = 0
        /// The change set's changes were unknown (pruned from a change log before this process read them), or it
        /// does not follow on from the result.
        public var unknownChanges = 0
        /// The query failed at its last evaluation, or the changed documents could not be read.
        public var failure = 0

        /// Every rerun.
        public var total: Int { laterCommit + offset + windowRefill + manyChanges + unknownChanges + failure }
    }
}

extension LiveQueryStatistics {
    /// Why a query must run again: one of ``Reruns``' counts.
    enum RerunReason {
        case laterCommit, offset, windowRefill, manyChanges, unknownChanges, failure
    }
}

extension LiveQueryStatistics.Reruns {
    /// Counts one rerun for `reason`.
    mutating func count(_ reason: LiveQueryStatistics.RerunReason) {
        switch reason {
        case .laterCommit: laterCommit += 1
        case .offset: offset += 1
        case .windowRefill: windowRefill += 1
        case .manyChanges: manyChanges += 1
        case .unknownChanges: unknownChanges += 1
        case .failure: failure += 1
        }
    }
}
