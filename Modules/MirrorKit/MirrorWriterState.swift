/// What a mirror's writer does next. A pure state machine — no locks, tasks or store — that ``ResourceMirror`` keeps
/// in its lock and carries out.
///
/// Invariants: at most one write runs at a time, so writes reach the store in the order the resource changed; at
/// most one more waits, the newest offered (a newer one replaces it, unless the offer says the waiting one covers
/// it), so a fast resource never piles writes up; a waiter for the writer to be idle is resumed exactly once, when
/// nothing runs and nothing waits.
struct MirrorWriterState<Work, Waiter> {
    fileprivate enum Phase {
        case idle
        case writing(next: Work?, waiters: [Waiter])
    }

    private var phase = Phase.idle

    /// What to do after work is offered.
    enum OfferAction {
        /// Start a writer, which writes this work first.
        case startWriting(Work)
        /// A writer is running; it takes the work when it is done with the current one.
        case none
    }

    /// `work` is the newest thing to write. It replaces the work waiting, if any, unless `isCoveredBy` says that
    /// writing the waiting work does what `work` would: then `work` is dropped.
    mutating func offer(_ work: Work, isCoveredBy: (Work) -> Bool = { _ in false }) -> OfferAction {
        switch phase {
        case .idle:
            phase = .writing(next: nil, waiters: [])
            return .startWriting(work)
        case .writing(let next, let waiters):
            if let next, isCoveredBy(next) { return .none }
            phase = .writing(next: work, waiters: waiters)
            return .none
        }
    }

    /// What the writer does once a write has finished.
    enum FinishAction {
        /// Write this next.
        case write(Work)
        /// Stop, and resume these waiters.
        case stop(resuming: [Waiter])
    }

    /// The write in progress has finished.
    mutating func finished() -> FinishAction {
        guard case .writing(let next, let waiters) = phase else { preconditionFailure("no write was running") }
        if let next {
            phase = .writing(next: nil, waiters: waiters)
            return .write(next)
        }
        phase = .idle
        return .stop(resuming: waiters)
    }

    /// `waiter` waits until the writer is idle. Returns false when it is idle already (resume it now).
    mutating func wait(_ waiter: Waiter) -> Bool {
        guard case .writing(let next, var waiters) = phase else { return false }
        waiters.append(waiter)
        phase = .writing(next: next, waiters: waiters)
        return true
    }
}

extension MirrorWriterState: Sendable where Work: Sendable, Waiter: Sendable {}
extension MirrorWriterState.Phase: Sendable where Work: Sendable, Waiter: Sendable {}
