import DocumentStoreKit
import Foundation

/// One observed query's schedule: where its result stands, and where each of its observers stands with it. Pure: no
/// lock, clock, task or I/O — the engine keeps it in its state, under its lock, passes in the moments it read, and
/// carries out what it returns.
///
/// Each result is published here once: it goes at once to the observers that are idle, and an observer still busy with
/// an earlier result takes the latest when it signals. So a result costs work only for the observers that can take it
/// now, however many are busy. When no observer is idle, the query's changes are held back instead of computing
/// results nobody can take (``Phase/held(_:)``); the first observer to go idle wakes it — or, when the observers take
/// long enough over a result, the engine computes it a little before the next signal is due (``SignalPace``).
///
/// A result computed while every observer is busy — ahead of their signal, for someone catching up, or once the writer
/// went quiet — is staged in each busy observer's lane: its signal takes it from there at once, the lane asking only
/// whether nothing came after it (``isStagedCurrent(_:for:received:applied:at:)``); when something did, the lane
/// withdraws it and the observer goes idle as if none had been staged.
struct QuerySchedule: Sendable {
    /// Where the query's result stands.
    enum Phase: Sendable {
        /// Not yet evaluated: its first evaluation is owed.
        case unevaluated
        /// Exact through every commit the engine has applied (see ``LiveQueryEngine/Evaluation/exactCommit(applied:)``).
        case current
        /// Every observer was busy: these changes wait, merged, until one is ready (or a computation ahead of a
        /// signal, a wait to catch up, or a quiet writer brings them in).
        case held(HeldChanges)
        /// The last evaluation failed, the last good result kept: the query runs again at the next commit, or at its
        /// retry. `streak` failures in a row, each retry waiting longer.
        case failing(streak: Int)
    }

    /// Whether a retry of a failing query waits on the clock: one at a time.
    enum RetryTimer: Sendable {
        case none
        case pending
    }

    /// Where one observer stands.
    enum ObserverPhase: Sendable {
        /// Waiting for the next result: it takes the next one published at once.
        case idle
        /// Handling the result it last took.
        case busy
        /// Busy, with a later result staged in its lane for its signal; `before` is what it had taken until then,
        /// restored if its signal finds the staged result out of date.
        case staged(before: Taken)
    }

    /// An observer, the result it last took, and where it stands. One record per observer: the check at its signal
    /// finds all it needs with one lookup.
    struct Member: Sendable {
        let registration: Registration
        var taken: Taken?
        var phase: ObserverPhase
    }

    /// The result an observer last took: its generation, and when it was handed over (on the time source's
    /// `elapsed`, while signals are anticipated).
    struct Taken: Sendable {
        var generation: UInt64
        var at: Duration?
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

    /// What an observer that just went idle does.
    enum IdleAction {
        /// Takes this result, newer than its last.
        case take(Snapshot)
        /// Waits, idle, for the next result: the engine brings the query up to date if changes wait for it.
        case wait
    }

    var phase = Phase.unevaluated
    var retryTimer = RetryTimer.none
    /// The latest result published, and when (on the time source's wall clock: for an inspector).
    private(set) var latest: Snapshot?
    private(set) var publishedAt: Date?
    /// Counts published results; each member's ``Member/taken`` says which it last took.
    private(set) var generation: UInt64 = 0
    private(set) var members: [ObjectIdentifier: Member] = [:]
    /// How many members are ``ObserverPhase/idle``.
    private(set) var idleCount = 0
    /// How long observers take over a result.
    private var pace = SignalPace()

    var isHeld: Bool {
        if case .held = phase { true } else { false }
    }

    var isFailing: Bool {
        if case .failing = phase { true } else { false }
    }

    var hasIdleObserver: Bool { idleCount > 0 }

    var registrations: some Collection<Registration> { members.values.lazy.map(\.registration) }

    /// Whether the observer has not taken the latest result.
    func isBehind(_ id: ObjectIdentifier) -> Bool {
        (members[id]?.taken?.generation ?? 0) < generation
    }

    // MARK: Observers coming and going

    /// A new observer: it takes the query's current result now (counted as having the latest), or — `idle` — waits
    /// for the next one. `now` is the moment (nil when signals are not anticipated).
    mutating func join(_ registration: Registration, idle: Bool, at now: Duration?) {
        let id = ObjectIdentifier(registration)
        if let old = members[id], case .idle = old.phase { idleCount -= 1 }
        members[id] = Member(registration: registration, taken: nil, phase: idle ? .idle : .busy)
        if idle {
            idleCount += 1
        } else {
            handOut(to: CollectionOfOne(id), at: now)
        }
    }

    /// Forgets an observer that ended.
    mutating func remove(_ id: ObjectIdentifier) {
        guard let member = members.removeValue(forKey: id) else { return }
        if case .idle = member.phase { idleCount -= 1 }
    }

    // MARK: Publishing

    /// Records `snapshot` as the latest result, published at `date` and `now` (nil: signals are not anticipated);
    /// returns whom to submit it to, outside the lock, and when to compute the next one. A result none of the observers
    /// can take now is staged in their lanes, unless it is a failure: that is taken at the signal, so that no check at
    /// the signal has to know it.
    mutating func publish(_ snapshot: Snapshot, date: Date, at now: Duration?) -> Publication {
        latest = snapshot
        publishedAt = date
        generation += 1
        var publication = Publication()
        if idleCount > 0 {
            var ready: [ObjectIdentifier] = []
            ready.reserveCapacity(idleCount)
            for (id, member) in members {
                guard case .idle = member.phase else { continue }
                ready.append(id)
                publication.ready.append(member.registration)
            }
            handOut(to: ready, at: now)
        } else if case .documents = snapshot, !members.isEmpty {
            publication.staged = members.values.map(\.registration)
            stageToAll(at: now)
        } else {
            return publication
        }
        publication.computeAhead = now.flatMap { pace.held(at: $0) }
        return publication
    }

    /// Records that the observers `ids` were handed the latest result at `now` (nil: signals are not anticipated), and
    /// notes when to compute ahead of their signal.
    private mutating func handOut(to ids: some Sequence<ObjectIdentifier>, at now: Duration?) {
        var any = false
        for id in ids {
            // Through the index: `members[id]?.taken = …` goes through the dictionary's `modify` coroutine, whose
            // frame — a whole `Member?` — is allocated on the heap at every call.
            guard let index = members.index(forKey: id) else { continue }
            if case .idle = members.values[index].phase { idleCount -= 1 }
            members.values[index].taken = Taken(generation: generation, at: now)
            members.values[index].phase = .busy
            any = true
        }
        if any, let now { pace.handedOut(at: now) }
    }

    /// Records that every member, all of them busy, was staged the latest result at `now`: each is counted as taking
    /// it when its last result's handling time has passed, and the computation ahead of the signal after that is noted
    /// from the first of those moments.
    private mutating func stageToAll(at now: Duration?) {
        var first: Duration?
        var index = members.startIndex
        while index != members.endIndex {
            let before = members.values[index].taken ?? Taken(generation: 0, at: nil)
            var at = before.at
            if case .busy = members.values[index].phase {
                members.values[index].phase = .staged(before: before)
                // Staged again before its signal, it is still expected at the same moment.
                at = now.map { now in max(now, before.at.map { $0 + (pace.handling ?? .zero) } ?? now) }
            }
            members.values[index].taken = Taken(generation: generation, at: at)
            if let at { first = min(first ?? at, at) }
            index = members.index(after: index)
        }
        if let first { pace.handedOut(at: first) }
    }

    // MARK: Signals

    /// The lane's check at an observer's signal when a result waits in it: whether `snapshot` is still the latest —
    /// no later one published, no change held back, and every commit the engine received (`received`) either before it
    /// or applied by a round that left it alone (`applied`: a commit the engine keeps, or a round still running, counts
    /// as one that may alter it). Taken, a staged result counts as handed out `now`; out of date, it is withdrawn, and
    /// the observer is as before it was staged.
    mutating func isStagedCurrent(
        _ snapshot: Snapshot, for id: ObjectIdentifier, received: UInt64, applied: UInt64, at now: Duration?
    ) -> Bool {
        let index = members.index(forKey: id)
        var before: Taken?
        if let index, case .staged(let taken) = members.values[index].phase {
            before = taken
            members.values[index].phase = .busy
        }
        guard case .documents(_, let commit, let content) = snapshot else { return true }
        guard !isHeld, received <= max(commit, applied),
            case .documents(_, let latestCommit, let latestContent)? = latest,
            latestCommit == commit, latestContent == content
        else {
            if let index, let before { members.values[index].taken = before }
            return false
        }
        if let index, let before {
            // The signal ends the observer's handling of its last result, and starts that of this one.
            if let now, let handedAt = before.at { pace.signalled(handedAt: handedAt, now: now) }
            members.values[index].taken?.at = now
        }
        return true
    }

    /// The observer signalled at `now` and nothing waits in its lane: it takes the latest result if it has not —
    /// unless changes wait that may alter it (held back, or `commitsKept`: commits the engine kept without a round) —
    /// or goes idle.
    mutating func becameIdle(_ id: ObjectIdentifier, commitsKept: Bool, at now: Duration?) -> IdleAction {
        guard let index = members.index(forKey: id) else { return .wait }
        if case .staged(let before) = members.values[index].phase {
            // A staged result its lane no longer holds (it went idle between the staging and the submission): the
            // observer takes the latest as if none had been staged.
            members.values[index].taken = before
            members.values[index].phase = .busy
        }
        // Each signal follows a hand-out: the time since it is how long the observer took over the result.
        if let now, let handedAt = members.values[index].taken?.at { pace.signalled(handedAt: handedAt, now: now) }
        if !isHeld, !commitsKept, let latest, isBehind(id) {
            handOut(to: CollectionOfOne(id), at: now)
            return .take(latest)
        }
        if case .idle = members.values[index].phase {} else { idleCount += 1 }
        members.values[index].phase = .idle
        return .wait
    }

    /// The latest result, with the idle observers that have not taken it, to submit it to outside the lock; nil when
    /// every idle observer has it. An observer busy when a result was published, that goes idle while the query's
    /// changes are held back, waits for the result those changes bring; when they turn out not to alter the result,
    /// nothing is published, and it takes this one instead.
    mutating func offerToIdleBehind(at now: Duration?) -> (Snapshot, [Registration])? {
        guard !isHeld, let latest, idleCount > 0 else { return nil }
        let behind = members.filter { id, member in
            if case .idle = member.phase { isBehind(id) } else { false }
        }
        guard !behind.isEmpty else { return nil }
        handOut(to: behind.keys, at: now)
        return (latest, behind.values.map(\.registration))
    }

    // MARK: Holding back

    /// Whether changes for the query are to be held back: no observer is idle to take a result, and the query is
    /// neither failing (it runs again at each commit) nor without observers. When held from `now` on, says how long
    /// from now to compute ahead of the busy observers' signal, if a computation is to be scheduled now (see
    /// ``SignalPace/held(at:)``).
    mutating func holds(at now: Duration?) -> (held: Bool, computeAhead: Duration?) {
        guard !isFailing, !members.isEmpty, idleCount == 0 else { return (false, nil) }
        return (true, now.flatMap { pace.held(at: $0) })
    }

    // MARK: Failing

    /// The query's evaluation failed: its last good result stays, and it runs again at the next commit — and after a
    /// wait, when `retry` says so and no retry waits already: returns how long.
    mutating func failed(retry: EvaluationRetry) -> Duration? {
        let streak = if case .failing(let streak) = phase { streak + 1 } else { 1 }
        phase = .failing(streak: streak)
        guard case .none = retryTimer, let delay = retry.delay(afterFailures: streak) else { return nil }
        retryTimer = .pending
        return delay
    }

    // MARK: For an inspector

    /// The latest result, if the observer has not taken it: what it takes when it signals.
    func owed(to id: ObjectIdentifier) -> (snapshot: Snapshot, publishedAt: Date?)? {
        guard let member = members[id], let latest, isBehind(id) else { return nil }
        if case .idle = member.phase { return nil }
        return (latest, publishedAt)
    }

    /// When `snapshot` was published, if it is the latest result (a result staged in a lane is).
    func publishedAt(of snapshot: Snapshot) -> Date? {
        latest == snapshot ? publishedAt : nil
    }
}
