public import TetherClock

extension Store {
    /// How a store's live queries trade work for latency. The defaults suit most applications.
    ///
    /// ```swift
    /// let store = Store(documents, configuration: .init(quietPeriod: .milliseconds(50), retry: .atNextCommit))
    /// ```
    public struct Configuration: Sendable {
        /// While every observer of a query is busy with an earlier result, its changes are held back and nothing is
        /// computed per commit. Nil (the default): the result is computed when an observer signals (or just before,
        /// see ``anticipatesSignals``). Given a period, the latest result is also computed once no commit has come for
        /// that long, so that an observer signalling afterwards takes it at once — at the cost of a timer that wakes
        /// once per period while commits keep coming.
        public var quietPeriod: Duration?
        /// Whether a held-back result is computed a little before a busy observer is due to signal, timed by how long
        /// the query's observers took over their last result (one clock read per hand-out and per signal; nothing for
        /// observers quicker than 1 ms): the signal then takes the latest result at once instead of waiting for it to
        /// be computed, at the cost of one more computation per delivery while the writer keeps committing. On by
        /// default.
        public var anticipatesSignals: Bool
        /// When a query whose evaluation failed is run again without waiting for a commit (by default after 100 ms,
        /// doubling up to 5 s while it keeps failing; see ``EvaluationRetry``).
        public var retry: EvaluationRetry
        /// The clock the quiet period, the observers' handling times and the retries are measured on (a
        /// `ManualTimeSource` in tests).
        public var timeSource: any TimeSource

        /// A configuration; every parameter has the default described on its property.
        public init(
            quietPeriod: Duration? = nil, anticipatesSignals: Bool = true, retry: EvaluationRetry = .default,
            timeSource: any TimeSource = .system
        ) {
            self.quietPeriod = quietPeriod
            self.anticipatesSignals = anticipatesSignals
            self.retry = retry
            self.timeSource = timeSource
        }
    }
}
