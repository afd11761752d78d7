import Foundation
import TetherClock
import TetherConcurrency

/// A query's latest result, and which of its observers are ready for the next one. The engine publishes each result
/// here once: it goes at once to the observers that are idle, and an observer still busy with an earlier result
/// takes the latest when it signals (its lane's idle callback). So a result costs work only for the observers that
/// can take it now, however many are busy — a thousand observers on one slow queue cost one submission each per
/// handler call, not one per result.
///
/// When no observer is idle, the engine holds the query's changes back instead of computing results nobody can take
/// (``holdIfNoneIdle(schedulingAhead:)``, and from the hand-out on, see ``hasIdleObserver``); the first observer to go
/// idle then wakes it — or, when the observers take long enough over a result for it to matter, the engine computes it
/// a little before the next signal is due (``SignalPace``): a hand-out notes when, and says when to schedule it.
///
/// A result computed while every observer is busy — ahead of their signal, for someone catching up, or once the writer
/// went quiet — is staged in each busy observer's lane: its signal takes it from there at once, the lane checking only
/// that nothing came after it (``isStagedCurrent(_:for:received:applied:)``); when something did, the lane withdraws it
/// and the observer goes idle as if none had been staged.
final class PublishedResult: Sendable {
    struct State: Sendable {
        var snapshot: Snapshot?
        /// When ``snapshot`` was published, on the engine's time source: for an inspector (one clock read per
        /// result, none per delivery).
        var publishedAt: Date?
        /// Counts published results; each member's ``Member/taken`` says which it last took, and when.
        var generation: UInt64 = 0
        /// Observers idle with the latest result, waiting for the next.
        var idle: [ObjectIdentifier: Registration] = [:]
        /// Every observer that joined, idle or busy.
        var members: [ObjectIdentifier: Member] = [:]
        /// The query's changes are held back: the next observer to go idle wakes it.
        var isHeld = false
        /// How long observers take over a result.
        var pace = SignalPace()

        /// Whether the observer has not taken the latest result.
        func isBehind(_ id: ObjectIdentifier) -> Bool {
            (members[id]?.taken?.generation ?? 0) < generation
        }

        /// Records that the observers `ids` were handed the latest result at `now` (nil: signals are not
        /// anticipated), and notes when to compute ahead of their signal.
        mutating func handOut(to ids: some Sequence<ObjectIdentifier>, at now: Duration?) {
            var any = false
            for id in ids {
                // Through the index: `members[id]?.taken = …` goes through the dictionary's `modify` coroutine,
                // whose frame — a whole `Member?` — is allocated on the heap at every call.
                if let index = members.index(forKey: id) {
                    members.values[index].taken = Taken(generation: generation, at: now)
                }
                any = true
            }
            if any, let now { pace.handedOut(at: now) }
        }

        /// Records that every member, all of them busy, was staged the latest result at `now` (nil: signals are
        /// not anticipated): each is counted as taking it when its last result's handling time has passed, and the
        /// computation ahead of the signal after that is noted from the first of those moments.
        mutating func stageToAll(at now: Duration?) {
            var first: Duration?
            var index = members.startIndex
            while index != members.endIndex {
                let before = members.values[index].taken ?? Taken(generation: 0, at: nil)
                var at = before.at
                if members.values[index].staged == nil {
                    members.values[index].staged = before
                    // Staged again before its signal, it is still expected at the same moment.
                    at = now.map { now in max(now, before.at.map { $0 + (pace.handling ?? .zero) } ?? now) }
                }
                members.values[index].taken = Taken(generation: generation, at: at)
                if let at { first = min(first ?? at, at) }
                index = members.index(after: index)
            }
            if let first { pace.handedOut(at: first) }
        }
    }

    /// An observer that joined, with the result it last took and — while its lane holds a staged result — what it
    /// had taken before that one, restored when its signal finds the staged result out of date. One record per
    /// observer: the check at its signal finds all it needs with one lookup.
    struct Member: Sendable {
        let registration: Registration
        var taken: Taken?
        var staged: Taken?
    }

    /// The result an observer last took: its generation, and when it was handed over (on the time source's
    /// `elapsed`, while signals are anticipated).
    struct Taken: Sendable {
        var generation: UInt64
        var at: Duration?
    }

    /// What an observer that just went idle does.
    enum IdleAction {
        /// Takes this result, newer than its last.
        case take(Snapshot)
        /// Waits, idle, for the next result: the engine brings the query up to date if changes wait for it.
        case wait
    }

    let state = LockedValue(State())
    let timeSource: any TimeSource
    /// Whether hand-outs and signals are timed, to compute held-back results ahead of the next signal.
    let anticipatesSignals: Bool

    init(timeSource: any TimeSource, anticipatesSignals: Bool) {
        self.timeSource = timeSource
        self.anticipatesSignals = anticipatesSignals
    }

    /// The moment of a hand-out or a signal, when signals are anticipated (read before taking a lock).
    var moment: Duration? {
        anticipatesSignals ? timeSource.elapsed : nil
    }

    /// What a published result goes to.
    struct Publication {
        /// The idle observers: it is submitted to them, and they take it at once.
        var ready: [Registration] = []
        /// The busy observers, when none was idle: it is submitted to them, and staged in their lanes.
        var staged: [Registration] = []
        /// When they take long enough over a result, how long from now to compute the next one ahead of their signal
        /// (the engine holds the query back from the hand-out on: no round of its own schedules it later).
        var computeAhead: Duration?
    }

    /// Records `snapshot` as the latest result; returns whom to submit it to, outside the lock, and when to compute
    /// the next one. A result none of the observers can take now is staged in their lanes, unless it is a failure:
    /// that is taken at the signal, so that no check at the signal has to know it.
    func publish(_ snapshot: Snapshot) -> Publication {
        let (date, now) = (timeSource.now, moment)
        return state.withLock { state in
            state.snapshot = snapshot
            state.publishedAt = date
            state.generation += 1
            state.isHeld = false
            var publication = Publication()
            if !state.idle.isEmpty {
                publication.ready = Array(state.idle.values)
                state.idle.removeAll(keepingCapacity: true)
                state.handOut(to: publication.ready.lazy.map(ObjectIdentifier.init), at: now)
            } else if case .documents = snapshot, !state.members.isEmpty {
                publication.staged = state.members.values.map(\.registration)
                state.stageToAll(at: now)
            } else {
                return publication
            }
            publication.computeAhead = now.flatMap { state.pace.held(at: $0) }
            return publication
        }
    }

    /// The lane's check at an observer's signal, when a result waits in it (``DeliveryLane/checkWaitingAtSignal(_:)``):
    /// whether `snapshot` is still the query's latest result — no later one published, no change held back, and
    /// every commit the engine received (`received`) either before it or applied by a round that left it alone
    /// (`applied`: a commit the engine keeps, or a round still running, counts as one that may alter it). Taken, a
    /// staged result counts as handed out now; out of date, it is withdrawn, and the observer is as before it was
    /// staged. Under the lane's lock: takes only this one.
    func isStagedCurrent(_ snapshot: Snapshot, for id: ObjectIdentifier, received: UInt64, applied: UInt64) -> Bool {
        let now = moment
        return state.withLock { state in
            let index = state.members.index(forKey: id)
            let before = index.flatMap { state.members.values[$0].staged.take() }
            guard case .documents(_, let commit, let content) = snapshot else { return true }
            guard !state.isHeld, received <= max(commit, applied),
                case .documents(_, let latestCommit, let latestContent)? = state.snapshot,
                latestCommit == commit, latestContent == content
            else {
                if let index, let before { state.members.values[index].taken = before }
                return false
            }
            if let index, let before {
                // The signal ends the observer's handling of its last result, and starts that of this one.
                if let now, let handedAt = before.at { state.pace.signalled(handedAt: handedAt, now: now) }
                state.members.values[index].taken?.at = now
            }
            return true
        }
    }

    /// Whether an observer waits, idle, for the next result. When none does, a commit that can alter the result would
    /// only be held back (``holdIfNoneIdle(schedulingAhead:)``): the engine keeps commits without a round until one
    /// goes idle. Read under the engine's lock.
    var hasIdleObserver: Bool {
        state.withLock { !$0.idle.isEmpty }
    }

    /// A new observer: it takes the query's current result now (it is counted as having the latest), or — `idle`,
    /// the query not yet evaluated — waits for the first. `now` is the moment (nil when signals are not
    /// anticipated), read by the caller before it takes the engine's lock, under which it joins.
    func join(_ registration: Registration, idle: Bool, at now: Duration?) {
        state.withLock { state in
            let id = ObjectIdentifier(registration)
            state.members[id] = Member(registration: registration)
            if idle {
                state.idle[id] = registration
            } else {
                state.handOut(to: CollectionOfOne(id), at: now)
            }
        }
    }

    /// The latest result, if `registration`'s observer has not taken it: what it takes when it signals. For an
    /// inspector.
    func owed(to registration: Registration) -> (snapshot: Snapshot, publishedAt: Date?)? {
        state.withLock { state in
            let id = ObjectIdentifier(registration)
            guard state.idle[id] == nil, state.isBehind(id),
                let snapshot = state.snapshot
            else { return nil }
            return (snapshot, state.publishedAt)
        }
    }

    /// When `snapshot` was published, if it is the latest result (a result staged in a lane is): for an inspector.
    func publishedAt(of snapshot: Snapshot) -> Date? {
        state.withLock { state in state.snapshot == snapshot ? state.publishedAt : nil }
    }

    /// `registration`'s observer signalled at `now` (``moment``) and nothing waits in its lane: it takes the latest
    /// result if it has not — unless changes wait that may alter it (held back, or `commitsKept`: commits the engine
    /// kept without a round, as the engine read them just before) — or joins the idle observers.
    func becameIdle(_ registration: Registration, commitsKept: Bool, at now: Duration?) -> IdleAction {
        state.withLock { state in
            let id = ObjectIdentifier(registration)
            let index = state.members.index(forKey: id)
            if let index, let before = state.members.values[index].staged.take() {
                // A staged result its lane no longer holds (it went idle between the staging and the submission):
                // the observer takes the latest as if none had been staged.
                state.members.values[index].taken = before
            }
            // Each signal follows a hand-out: the time since it is how long the observer took over the result.
            if let now, let index, let handedAt = state.members.values[index].taken?.at {
                state.pace.signalled(handedAt: handedAt, now: now)
            }
            if !state.isHeld, !commitsKept, let snapshot = state.snapshot, state.isBehind(id) {
                state.handOut(to: CollectionOfOne(id), at: now)
                return .take(snapshot)
            }
            state.idle[id] = registration
            return .wait
        }
    }

    /// Marks the query's changes held back if no observer is idle; returns whether it did, and — `schedulingAhead`,
    /// unless the round computes the result anyway — when to compute ahead of the busy observers' signal if a
    /// computation is to be scheduled now (see ``SignalPace/held(at:)``).
    func holdIfNoneIdle(schedulingAhead: Bool) -> (held: Bool, computeAhead: Duration?) {
        let now = schedulingAhead ? moment : nil
        return state.withLock { state in
            state.isHeld = state.idle.isEmpty
            guard state.isHeld, let now else { return (state.isHeld, nil) }
            return (true, state.pace.held(at: now))
        }
    }

    /// The held-back changes were applied without a new result (they did not alter it).
    func release() {
        state.withLock { $0.isHeld = false }
    }

    /// The latest result, with the idle observers that have not taken it, to submit it to outside the lock; nil when
    /// every idle observer has it. An observer busy when a result was published, that goes idle while the query's
    /// changes are held back, waits for the result those changes bring (``becameIdle(_:commitsKept:at:)``); when they
    /// turn out not to alter the result, nothing is published, and it takes this one instead.
    func offerToIdleBehind() -> (Snapshot, [Registration])? {
        let now = moment
        return state.withLock { state in
            guard !state.isHeld, let snapshot = state.snapshot else { return nil }
            let behind = state.idle.filter { id, _ in state.isBehind(id) }
            guard !behind.isEmpty else { return nil }
            for id in behind.keys { state.idle[id] = nil }
            state.handOut(to: behind.keys, at: now)
            return (snapshot, Array(behind.values))
        }
    }

    /// Forgets an observer that ended.
    func remove(_ registration: Registration) {
        state.withLock { state in
            let id = ObjectIdentifier(registration)
            state.idle[id] = nil
            state.members[id] = nil
        }
    }
}
