import DocumentStoreKit
import Foundation

/// The live-query engine's scheduling policy, whole — this file: across its queries (``LiveQuerySchedule``), where the
/// writer's commits go, when the consumer sleeps through them, when held-back results are computed anyway — ahead of a
/// busy observer's signal, once the writer is quiet, for someone catching up — and when observers whose owners died
/// are looked for; for each query and each of its observers (``QuerySchedule``), when a result is computed, held back,
/// staged in a lane, withdrawn, handed out or retried.
///
/// Pure: no lock, clock, task or I/O. The engine keeps it in its state under its lock, passes in what it read (the
/// moment, the last commit received, what its inbox holds), and carries out what it returns: resuming the consumer,
/// starting a timer, submitting to lanes, counting. The engine's other files hold the machinery: the inbox, the
/// evaluations, the consumer task, the timers.
///
/// The engine's lock order, in one place: an observer's lane, then the engine (the lane's check at a signal asks the
/// engine); the observer table, then the engine (a stopped notice unregisters). The engine takes no other lock while
/// it holds its own: submissions to lanes, table sweeps and timers all wait until it is released.
struct LiveQuerySchedule: Sendable {
    /// Where the writer's commits go.
    enum Intake: Sendable {
        /// Into the inbox, for the consumer's next round.
        case rounds
        /// Every observed query is held back — its changes already held, or every one of its observers busy with the
        /// result just handed out: a round would only hold the commit back too. Commits are kept in the inbox, merged
        /// by the writer, and the consumer sleeps, until an observer goes idle, a new one comes, someone waits to
        /// catch up, a computation ahead of a signal is due, the writer has been quiet for the quiet period, or an
        /// owner is found dead.
        case keeping
    }

    /// What the round under way owes someone waiting to catch up.
    enum Round: Sendable {
        /// Nothing: no round, or one that only applies commits.
        case owesNothing
        /// It starts observers or brings held-back queries up to date.
        case owesWork
    }

    /// The writer, as a computation ahead of a signal sees it: a writer that committed within its window is taken to
    /// be still committing (``LiveQueryEngine/WriterPace``).
    enum Writer: Sendable {
        case unseen
        case committed(at: Duration)
    }

    /// A check for dead owners while every query is held back, which the consumer cannot make now (see
    /// ``deadOwnerFound()``).
    enum DeadOwnerCheck: Sendable {
        case none
        case due
    }

    var intake = Intake.rounds
    var round = Round.owesNothing
    var writer = Writer.unseen
    var deadOwnerCheck = DeadOwnerCheck.none
    /// Watching for the writer to go quiet, to compute held-back results then.
    var quietWatch = QuietWatch.idle
    /// Watching for the writer to pause before the rest of the observer table is swept.
    var sweepWatch = SweepWatch.idle
    /// How many observers are still to be checked for dead owners since the last round with changes: once the writer
    /// has paused, the consumer runs rounds with nothing else to do while any are.
    var sweepDebt = 0
    /// Some query's changes are held back (as of the last round).
    var hasHeld = false
    /// The computations ahead of a signal scheduled and not yet run.
    var aheadTimers = AheadTimers()

    var isKeeping: Bool {
        if case .keeping = intake { true } else { false }
    }

    // MARK: Commits

    /// What the writer's thread does with a commit.
    enum CommitRoute {
        /// Keep it in the inbox (``Intake/keeping``); start watching for quiet if none watches.
        case keep(watchForQuiet: Bool)
        /// Hand it to the consumer.
        case toConsumer
    }

    /// A commit reached the engine at `now` (nil: signals are not anticipated, the writer is not timed). Kept while
    /// every query is held back — unless the commits kept have reached their bound (`inboxIsFull`) and the consumer
    /// is parked (`consumerWaits`): then it merges them in a round (which holds them back again) rather than the
    /// writer's thread. `watchesForQuiet`: the store has a quiet period.
    mutating func commitReceived(
        at now: Duration?, inboxIsFull: Bool, consumerWaits: Bool, watchesForQuiet: Bool, received: UInt64
    ) -> CommitRoute {
        if let now {
            if case .committed(let last) = writer {
                writer = .committed(at: max(last, now))
            } else {
                writer = .committed(at: now)
            }
        }
        guard isKeeping, !(inboxIsFull && consumerWaits) else {
            intake = .rounds
            return .toConsumer
        }
        return .keep(watchForQuiet: startsQuietWatch(enabled: watchesForQuiet, keptCommits: true, received: received))
    }

    /// Work went to a parked consumer: the round it runs owes what the work does.
    mutating func handedOver(owesWork: Bool) {
        round = owesWork ? .owesWork : .owesNothing
    }

    /// Something is to run now — an observer is added or goes idle, a query is woken, a retry is due: commits go to
    /// rounds again.
    mutating func wake() {
        intake = .rounds
    }

    // MARK: The consumer

    /// The consumer asks for work: whether it sleeps through what the inbox holds — every query is held back, only
    /// commits wait (`inboxHoldsOnlyChanges`), and no check for dead owners is due — leaving them kept.
    func keepsInbox(inboxHoldsOnlyChanges: Bool) -> Bool {
        guard isKeeping, inboxHoldsOnlyChanges, case .none = deadOwnerCheck else { return false }
        return true
    }

    /// The consumer takes work: whether its round sweeps for a dead owner found while every query was held back.
    mutating func takeDeadOwnerCheck() -> Bool {
        defer { deadOwnerCheck = .none }
        if case .due = deadOwnerCheck { return true } else { return false }
    }

    /// The consumer found no work: whether it runs a round that only sweeps — observers left to check once the writer
    /// paused, or a check for dead owners due — rather than sleep.
    mutating func takesSweepRound() -> Bool {
        round = .owesNothing
        return owesSweep || takeDeadOwnerCheck()
    }

    /// A round ended: `allHeld` (see ``LiveQueryEngine/allHeld(_:)``) decides where commits go now. Returns whether to
    /// start watching for quiet.
    mutating func roundFinished(
        allHeld: Bool, hasHeld: Bool, watchesForQuiet: Bool, inboxHasChanges: Bool, received: UInt64
    ) -> Bool {
        round = .owesNothing
        self.hasHeld = hasHeld
        intake = allHeld ? .keeping : .rounds
        return startsQuietWatch(enabled: watchesForQuiet, keptCommits: isKeeping && inboxHasChanges, received: received)
    }

    /// Which queries to wake for someone waiting to catch up with `commit`: every query whose changes are held back
    /// from `commit` or earlier — a result computed only when a busy observer signals could leave them waiting for
    /// ever — and every query when commits from `commit` or earlier wait in the inbox (`keptFrom`): the round merges
    /// them, holding them back for the queries whose observers are busy, and then brings those up to date too.
    static func toWake(
        through commit: UInt64, keptFrom: UInt64?, among evaluations: [DocumentQuery: LiveQueryEngine.Evaluation],
        wokenAlready: Set<DocumentQuery>
    ) -> [DocumentQuery] {
        let kept = keptFrom ?? .max
        var held: [DocumentQuery] = []
        for (query, evaluation) in evaluations where !wokenAlready.contains(query) {
            if min(kept, evaluation.held?.changes.commits.lowerBound ?? .max) <= commit { held.append(query) }
        }
        return held
    }

    // MARK: Quiet

    /// Whether to start watching for quiet now: the store has a quiet period, something is held back (changes held
    /// for a query, or `keptCommits`), and no watch runs. Marks it running from `received`.
    mutating func startsQuietWatch(enabled: Bool, keptCommits: Bool, received: UInt64) -> Bool {
        guard enabled, hasHeld || keptCommits, case .idle = quietWatch else { return false }
        quietWatch = .watching(since: received)
        return true
    }

    /// What a watch for the writer's pause decides when its period has passed.
    enum WatchOutcome {
        /// Commits came meanwhile: watch another period.
        case again
        /// The writer paused: act (the quiet watch wakes the held-back queries; the sweep watch lets rounds that only
        /// sweep run).
        case paused
        /// No watch runs, or nothing is left to do.
        case ended
    }

    /// A quiet period passed; `received`: the last commit received now.
    mutating func quietPeriodPassed(received: UInt64) -> WatchOutcome {
        guard case .watching(let since) = quietWatch else { return .ended }
        if received > since {
            quietWatch = .watching(since: received)
            return .again
        }
        quietWatch = .idle
        return .paused
    }

    // MARK: Dead owners

    /// Whether rounds that only sweep are owed: observers left to check, and the writer paused.
    var owesSweep: Bool {
        guard sweepDebt > 0, case .sweeping = sweepWatch else { return false }
        return true
    }

    /// A round checked its share of the table for dead owners, leaving `unvisited` entries unchecked; returns whether
    /// to start watching for the writer to pause (after changes) before the rest is swept.
    mutating func swept(unvisited: Int, afterChanges: Bool, received: UInt64) -> Bool {
        guard afterChanges else {
            sweepDebt = max(0, sweepDebt - LiveQueryEngine.sweepPerRound)
            if sweepDebt == 0, case .sweeping = sweepWatch { sweepWatch = .idle }
            return false
        }
        // Every entry this round did not look at is to be looked at once the writer pauses.
        sweepDebt = unvisited
        switch sweepWatch {
        case .watching:
            return false  // the period under way finds this commit, and watches another
        case .idle, .sweeping:
            guard unvisited > 0 else {
                sweepWatch = .idle
                return false
            }
            sweepWatch = .watching(since: received)
            return true
        }
    }

    /// The sweep's quiet period passed; `received`: the last commit received now.
    mutating func sweepPeriodPassed(received: UInt64) -> WatchOutcome {
        guard case .watching(let since) = sweepWatch else { return .ended }
        if received > since {
            sweepWatch = .watching(since: received)
            return .again
        }
        guard sweepDebt > 0 else {
            sweepWatch = .idle
            return .ended
        }
        sweepWatch = .sweeping
        return .paused
    }

    /// An observer's owner was found dead while every query was held back: a round must sweep it. Returns whether to
    /// resume the consumer now; when it cannot take the round now (it runs one, which may end by holding every query
    /// back again, or is already resumed), the check stays due for the round after.
    mutating func deadOwnerFound() -> Bool {
        guard isKeeping else { return false }  // a round comes anyway
        intake = .rounds
        return true
    }

    // MARK: Computing ahead of a signal

    /// What a computation ahead of a signal does when its time comes.
    enum AheadOutcome {
        /// Nothing: a later scheduling replaced it, or nothing is held back any more (a signal took it first).
        case nothing
        /// Left to the signal: the writer is still committing (`whileWriting`: a write in flight).
        case leftToSignal(whileWriting: Bool)
        /// Bring the query up to date now.
        case compute
    }

    /// The computation ahead `serial` came due at `now`. `canWake`: the query's changes still wait. `isWriting`: a
    /// write is in flight through the store. `window`: how recently the writer must have committed to be taken as
    /// still committing.
    mutating func aheadDue(serial: UInt64, canWake: Bool, isWriting: Bool, now: Duration, window: Duration)
        -> AheadOutcome
    {
        guard aheadTimers.take(serial), canWake else { return .nothing }
        if isWriting { return .leftToSignal(whileWriting: true) }
        if case .committed(let last) = writer, now - last < window { return .leftToSignal(whileWriting: false) }
        return .compute
    }
}

// MARK: - Each query

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
    /// the observer is as before it was staged — or, for a result handed out to it, behind the latest.
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
            // Withdrawn, it was not taken: a staged result leaves the observer as it was before; one handed out to it
            // (it waited behind a result delivered past the schedule) leaves it behind the latest, which its idle
            // signal then takes — counted as taken, it would wait for a later result that may never come.
            if let index {
                if let before {
                    members.values[index].taken = before
                } else {
                    members.values[index].taken?.generation = 0
                }
            }
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
            // A staged result its lane does not hold (it went idle between the staging and the submission): the
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

    /// What a round does with changes that can alter the result.
    enum ChangesDecision {
        /// Held back: every observer is busy. The first hold after a hand-out says when to compute ahead of their
        /// signal (see ``SignalPace``).
        case held(computeAhead: Duration?)
        /// Bring the result up to date now: with the round's changes alone (nil), or with the changes held back before
        /// and the round's, combined.
        case now(combined: HeldChanges?)
    }

    /// Changes that can alter the result reached the query in a round. They are held back while every one of its
    /// observers is busy with an earlier result — a slow consumer then costs one evaluation per delivery, not one per
    /// commit — unless it is failing (it runs again at each commit) or has no observers; the first observer to go
    /// idle wakes it. `now`: the moment, when a computation ahead of a signal may be scheduled.
    mutating func changesArrived(_ changes: ChangeSet, at now: Duration?) -> ChangesDecision {
        // Taken out first, so that merging updates it in place rather than copying it.
        var held: HeldChanges?
        if case .held(let changes) = phase {
            held = changes
            phase = .current
        }
        guard !isFailing, !members.isEmpty, idleCount == 0 else {
            held?.merge(changes)
            return .now(combined: held)
        }
        if held == nil { held = HeldChanges(changes) } else { held!.merge(changes) }
        phase = .held(held!)
        return .held(computeAhead: now.flatMap { pace.held(at: $0) })
    }

    /// Whether the query is held back — its changes held, or every one of its observers busy with a result (a
    /// failing query runs again at the next commit: never).
    var isHoldingBack: Bool {
        isHeld || !isFailing && idleCount == 0
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

// MARK: - The watches and paces it keeps

/// Computing held-back results once the writer is quiet.
///
/// A query whose every observer is busy has its changes held back: nothing is computed per commit (see
/// ``LiveQueryEngine/hold(_:_:counting:schedulingAhead:in:)``). Left at that, the result would be computed when an
/// observer signals, and the observer would wait for that computation. Instead, once no commit has come for the quiet
/// period, the engine brings the held-back queries up to date — once for the whole burst — so that an observer
/// signalling afterwards takes the latest result at once. While commits keep coming the watch wakes once per period and
/// computes nothing; a writer that commits less often than the period costs one computation per commit, as if nothing
/// were held back. Off unless the store is given a quiet period.
enum QuietWatch: Sendable {
    /// No watch: nothing is held back, or a watch has just ended.
    case idle
    /// Watching: the writer had committed up to `since` when the current quiet period began.
    case watching(since: UInt64)
}

/// Releasing observers whose owners died.
///
/// An observer's owners are checked at the moment its handler would run, so an observer whose owners died is never
/// called. Releasing it — unregistering it, and ending its query's evaluation when it was the last — is the sweep's
/// work, and it goes round the observer table: each round checks up to ``LiveQueryEngine/sweepPerRound`` observers,
/// so a round costs the same with 10,000 observers as with 100, and while commits keep coming the table is gone
/// round once every (observers ÷ 128) commits. Once the writer has paused for ``LiveQueryEngine/sweepQuietPeriod``,
/// rounds that only sweep check the rest of the table: owners that died just before the last commit are released
/// without waiting for another.
enum SweepWatch: Sendable {
    /// No watch: the table has been gone round since the last commit, or one round checks all of it.
    case idle
    /// Waiting for the writer to pause: it had committed up to `since` when the current period began.
    case watching(since: UInt64)
    /// The writer paused: rounds that only sweep run until the table has been gone round
    /// (``LiveQuerySchedule/sweepDebt``).
    case sweeping
}

/// How long a query's observers take over a result — from being handed it to signalling for the next — and when the
/// engine is to compute the held-back result, just before the next signal is due.
///
/// Measured at each signal, one clock read per hand-out and per signal: the engine then computes the latest result a
/// little before the busy observer is expected to ask for it, so that the signal takes it at once instead of waiting
/// for it to be computed — one computation per delivery, however fast the writer. A signal that comes early, or a
/// commit after the computation, costs what it costs without this: the result is computed when the observer signals.
///
/// A hand-out only notes when the computation will be due; the engine schedules it (``held(at:)``) in the round that
/// made the hand-out — every observer is busy from then on, so the commits after it are only kept — or, for a result
/// an observer took as it signalled, in the round that first holds a commit back after it. So neither the signalling
/// thread nor the writer's pays for a timer.
struct SignalPace: Sendable {
    /// Observers quicker than this cost nothing worth saving: nothing is computed ahead for them.
    static let threshold = Duration.milliseconds(1)
    /// The result is computed a quarter of the handling time before the signal is due, and at most this long before.
    static let maximumLead = Duration.milliseconds(1)

    /// The handling time measured at the last signal; nil before the first.
    private(set) var handling: Duration?
    /// When the computation for the last hand-out is due (on the time source's `elapsed`), until it is scheduled.
    private(set) var pending: Duration?
    /// When the computation scheduled last is due: one is scheduled at a time.
    private(set) var due: Duration?

    /// An observer handed a result at `handedAt` signalled at `now`.
    mutating func signalled(handedAt: Duration, now: Duration) {
        handling = now - handedAt
    }

    /// An observer was handed a result at `now`: notes when to compute ahead of its signal — never for observers
    /// quicker than ``threshold``.
    mutating func handedOut(at now: Duration) {
        guard let handling, handling >= Self.threshold else {
            pending = nil
            return
        }
        pending = now + handling - min(handling / 4, Self.maximumLead)
    }

    /// The query's changes are held back from `now` on: how long from now to compute ahead of the signal, when a
    /// computation is pending and none scheduled is still to come. At once when it is overdue.
    mutating func held(at now: Duration) -> Duration? {
        guard let pending, due.map({ $0 <= now }) ?? true else { return nil }
        self.pending = nil
        due = max(pending, now)
        return max(.zero, pending - now)
    }
}

extension LiveQueryEngine {
    /// A writer that committed this recently is taken to be still committing — at least.
    ///
    /// About the time one computation of a result takes: a commit is then likely to land after it, before the signal,
    /// and the signal would compute the result again — the observer waiting for it — while the one computed ahead
    /// only cost the writer's core. A burst that ends within the window before the computation was due leaves its
    /// final result to the signal, as a burst ending after the computation already did. A writer that commits less
    /// often widens the window (``WriterPace``).
    static let writerActiveWindow = Duration.microseconds(200)

    /// The widest the window gets: the longest a computation is made ahead of the signal (``SignalPace``).
    static let widestWriterActiveWindow = SignalPace.maximumLead

    /// How often the writer committed between the scheduling of a computation ahead and its time: the commits
    /// received since, over the delay.
    struct WriterPace: Sendable {
        /// The last commit received when the computation was scheduled.
        let since: UInt64
        /// The delay it was scheduled after.
        let over: Duration

        /// How recently the writer must have committed to be taken as still committing, once `received` is the last
        /// commit received: twice its mean interval between commits over the delay, from ``writerActiveWindow`` to
        /// ``widestWriterActiveWindow``. A writer committing back to back every 260 µs would otherwise find a 200 µs
        /// window open at about one computation in three, each made again at the signal.
        func activeWindow(received: UInt64) -> Duration {
            guard received > since else { return writerActiveWindow }
            let interval = over / Int(min(received - since, UInt64(Int.max)))
            return min(max(writerActiveWindow, interval * 2), widestWriterActiveWindow)
        }
    }
}
