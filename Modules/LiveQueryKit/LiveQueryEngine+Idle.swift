import TetherClock
import TetherConcurrency

/// When the consumer can sleep through commits, and what wakes it when an observer goes idle.
///
/// A query whose observers are all busy would only hold a commit's changes back
/// (``hold(_:_:counting:schedulingAhead:in:)``). So once every observed query is in that state — its changes already
/// held back, or its result just handed to every observer — the writer's commits are only kept in the inbox
/// (``State/isAllHeld``): a slow consumer costs neither the round the first commit after a hand-out would otherwise
/// run, nor the wake-up of the engine's thread for it. An observer that goes idle then finds those commits waiting and
/// has the consumer apply them before it takes a result.
extension LiveQueryEngine {
    /// Whether every observed query is held back: its changes held back, or every one of its observers busy with a
    /// result (a failing query runs again at the next commit: never). Under the engine's lock, at the end of a round.
    static func allHeld(_ state: State) -> Bool {
        guard !state.evaluations.isEmpty, !state.inbox.hasOwedWork else { return false }
        return state.evaluations.values.allSatisfy(\.schedule.isHoldingBack)
    }

    /// An observer of `registration`'s query signalled and nothing waits in its lane (its lane's idle callback). It
    /// takes the query's latest result if it has not — unless commits kept while every query was held back may alter
    /// it, or changes are held back for the query. Then, or when it has the latest, it waits idle, and the consumer
    /// applies the changes waiting in its next round, publishing to it. One turn of the engine's lock.
    func observerIdle(_ registration: Registration) {
        let now = moment
        let query = registration.query
        let (action, resume) = state.withLock {
            state -> (QuerySchedule.IdleAction, (EngineInbox.Consumer, EngineInbox.Work)?) in
            let commitsKept = state.hasKeptCommits
            guard
                let action = state.withEvaluation(
                    of: query,
                    {
                        $0.schedule.becameIdle(ObjectIdentifier(registration), commitsKept: commitsKept, at: now)
                    })
            else { return (.wait, nil) }
            guard state.schedule.isKeeping || state.canWake(query) else { return (action, nil) }
            // Idle, and changes wait: the next round applies them.
            if case .wait = action, state.canWake(query) { return (action, state.wake(CollectionOfOne(query))) }
            // Busy again with the latest, the next commit runs a round, which holds it back and times the computation
            // ahead of its signal (no round of the engine's handed this result out); idle with nothing waiting, the
            // next commit wakes the consumer.
            state.schedule.wake()
            return (action, state.handedOver(state.inbox.resumeIfWaiting()))
        }
        if case .take(let snapshot) = action { registration.lane.submit(snapshot) }
        if let resume { resume.0.resume(returning: resume.1) }
    }

    /// The moment of a hand-out or a signal, when signals are anticipated (read before taking the lock).
    var moment: Duration? {
        anticipatesSignals ? timeSource.elapsed : nil
    }
}
