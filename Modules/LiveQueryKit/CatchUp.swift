/// How far the engine has caught up with the store's commits, and who waits for it to reach a commit.
///
/// The engine has caught up with commit `c` when it has applied every change set up to `c` (each observed query's
/// result is exact at `c` or later and has been offered to its observers' lanes), has started every observer
/// registered so far, and has brought up to date every query held back at `c` or earlier. With nothing observed, it is caught up with every commit: there is nothing to bring up to date.
struct CatchUp: Sendable {
    typealias Waiter = (id: UInt64, commit: UInt64, continuation: CheckedContinuation<Void, Never>)

    /// Every change set up to this commit has been applied to every observed query.
    var applied: UInt64 = 0
    /// The store will publish nothing more (closed): whatever is waited for has been reached, or never will be.
    var feedEnded = false
    var waiters: [Waiter] = []
    var nextWaiterID: UInt64 = 0

    /// Whether commit `commit` has been caught up with, given whether work is owed (observers to start, held-back
    /// queries to bring up to date) and whether anything is observed.
    func isCaughtUp(with commit: UInt64, owedWork: Bool, observing: Bool) -> Bool {
        Self.isCaughtUp(with: commit, applied: applied, feedEnded: feedEnded, owedWork: owedWork, observing: observing)
    }

    private static func isCaughtUp(
        with commit: UInt64, applied: UInt64, feedEnded: Bool, owedWork: Bool, observing: Bool
    ) -> Bool {
        guard observing else { return true }
        return !owedWork && (applied >= commit || feedEnded)
    }

    /// Takes the waiters whose commit has been caught up with, to resume outside the lock.
    mutating func takeReady(owedWork: Bool, observing: Bool) -> [CheckedContinuation<Void, Never>] {
        guard !waiters.isEmpty else { return [] }
        let (applied, feedEnded) = (applied, feedEnded)
        let reached = { (commit: UInt64) in
            Self.isCaughtUp(
                with: commit, applied: applied, feedEnded: feedEnded, owedWork: owedWork, observing: observing)
        }
        let ready = waiters.filter { reached($0.commit) }.map(\.continuation)
        waiters.removeAll { reached($0.commit) }
        return ready
    }

    /// Takes one waiter (its task was cancelled).
    mutating func take(id: UInt64) -> CheckedContinuation<Void, Never>? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).continuation
    }
}
