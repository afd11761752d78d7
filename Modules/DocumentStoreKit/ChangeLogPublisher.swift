import TetherConcurrency

/// Hands a shared store's commits to its ``ChangeFeed`` in commit order, each exactly once, whoever finds them first:
/// the store's own write at its commit (with the log entries of other processes' commits before it, read inside the
/// same transaction), or the follower that reads the log while nothing is written here.
///
/// Commit numbers count up by one per commit in the whole file or database, whichever process made it, so "in order,
/// each once" is "the next number after the last one published".
public final class ChangeLogPublisher: Sendable {
    /// What ``publish(_:)`` did.
    public struct Outcome: Sendable, Equatable {
        /// How many entries went to the feed (those already published are skipped).
        public var published: Int
        /// The commits that are not in the log any more (pruned while this process was not reading, for longer than
        /// the retention), published as unknown changes so that consumers read again; nil when none is missing.
        public var missing: ClosedRange<UInt64>?

        /// Makes an outcome.
        public init(published: Int, missing: ClosedRange<UInt64>?) {
            self.published = published
            self.missing = missing
        }
    }

    private let feed: ChangeFeed
    private let last: LockedValue<UInt64>

    /// Makes a publisher whose feed has seen every commit up to `commit` — the store's data holds them — so the
    /// feed's `lastCommit` starts there.
    public init(feed: ChangeFeed, after commit: UInt64) {
        self.feed = feed
        self.last = LockedValue(commit)
        feed.start(at: commit)
    }

    /// The number of the last commit handed to the feed.
    public var lastPublished: UInt64 { last.withLock { $0 } }

    /// Publishes the entries of `entries` (in ascending commit order) that come after the last one published.
    @discardableResult
    public func publish(_ entries: some Sequence<ChangeLogEntry>) -> Outcome {
        // Under the lock, so that two finders cannot interleave; the feed's inline subscribers only take the set.
        last.withLock { last in
            var outcome = Outcome(published: 0, missing: nil)
            for entry in entries where entry.commit > last {
                if entry.commit > last + 1 {
                    // Pruned before this process read them: consumers are told to read again, so nothing is lost.
                    let gap = (last + 1)...(entry.commit - 1)
                    outcome.missing = outcome.missing.map { min($0.lowerBound, gap.lowerBound)...gap.upperBound } ?? gap
                    feed.publishUnknownChanges(in: gap)
                }
                feed.publish(entry.changes, commit: entry.commit, documents: entry.documents)
                last = entry.commit
                outcome.published += 1
            }
            return outcome
        }
    }
}
