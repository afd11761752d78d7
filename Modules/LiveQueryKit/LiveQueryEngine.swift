import DeliveryKit
import DocumentStoreKit
import Logging
import OwnershipKit
import TetherClock
import TetherConcurrency

/// Evaluates observed queries after each commit and hands snapshots to their observers' lanes.
///
/// One path from commit to handler: the store hands each commit's changes to the engine's inbox on the writer's
/// thread (merged there while the engine is busy: a fast writer costs one set, not a queue); one consumer task takes
/// everything in the inbox, brings the affected results up to date in commit order, and offers each to its observers'
/// lanes, where results coalesce to the latest. The consumer runs while anything is observed, and ends with the last
/// observer (or when the store is closed and nothing is observed any more): no work outlives what it is for.
///
/// Every result carries the commit it reflects; ``waitUntilCaughtUp(with:)`` waits for a commit to have reached
/// every observer's lane.
final class LiveQueryEngine: Sendable {
    struct Evaluation: Sendable {
        var documents: [Document] = []
        var ids: Set<String> = []
        /// The commit the result was last known exact at — computed, brought up to date, or held back there; see
        /// ``exactCommit(applied:)`` for how far it reaches.
        var commit: UInt64 = 0
        /// Counts the distinct results published: it moves only when the documents differ from the last ones (0:
        /// never evaluated).
        var content: UInt64 = 0
        /// Where the result and each of its observers stand (see ``QuerySchedule``).
        var schedule = QuerySchedule()

        var isEvaluated: Bool { content > 0 }

        /// The last commit the result is exact at, once the engine has applied every commit through `applied`.
        ///
        /// Each round checks its changes against every evaluated query of the collections it touched, and brings up
        /// to date (or holds back) each one they can alter; every other result — in a collection the round did not
        /// touch, or left alone by its changes — stays exact through the round's last commit without being
        /// touched, so a round costs nothing per unaffected query under the lock. (Rounds follow on from each other,
        /// and a result is never computed at a commit before the last applied one.) A result whose changes are
        /// held back, or that failed, is exact only at ``commit``.
        func exactCommit(applied: UInt64) -> UInt64 {
            if case .current = schedule.phase { max(commit, applied) } else { commit }
        }

        /// The changes held back for the query, if any.
        var held: HeldChanges? {
            if case .held(let changes) = schedule.phase { changes } else { nil }
        }

        /// What a round needs of the evaluation outside the lock (a copy of the whole would share its observers'
        /// table, which the next change to it would copy).
        var basis: Basis { Basis(documents: documents, ids: ids, commit: commit, isFailing: schedule.isFailing) }
    }

    /// An evaluation's result, taken out of the lock to bring it up to date.
    struct Basis: Sendable {
        let documents: [Document]
        let ids: Set<String>
        let commit: UInt64
        let isFailing: Bool
    }

    struct State: Sendable {
        var evaluations: [DocumentQuery: Evaluation] = [:]
        /// Which queries a round's changed documents can reach (kept with ``evaluations``).
        var relevance = RelevanceIndex()
        var inbox = EngineInbox()
        /// The consumer: running while anything is observed.
        var consumer: Task<Void, Never>?
        /// Every registration not yet unregistered: the feed subscription lives while this is not empty.
        var registered: Set<ObjectIdentifier> = []
        var subscription: ChangeSubscription?
        var catchUp = CatchUp()
        /// The engine was deinitialized: the consumer must end, whatever is still registered.
        var isEngineGone = false
        var statistics = LiveQueryStatistics()
        var failureSerial: UInt64 = 0

        /// Where commits go, when the consumer sleeps, and when held-back results are computed anyway.
        var schedule = LiveQuerySchedule()

        var isObserving: Bool { !registered.isEmpty }
        /// Observers to start or held-back queries to bring up to date, now or in the inbox: catching up waits for it.
        var hasOwedWork: Bool { schedule.round == .owesWork || inbox.hasOwedWork }

        /// Wakes the queries someone waiting to catch up with `commit` needs (``LiveQuerySchedule/toWake(through:keptFrom:among:wokenAlready:)``).
        /// Returns the consumer to resume, if it waits.
        mutating func wakeHeld(through commit: UInt64) -> (EngineInbox.Consumer, EngineInbox.Work)? {
            let held = LiveQuerySchedule.toWake(
                through: commit, keptFrom: inbox.changes.firstCommit, among: evaluations, wokenAlready: inbox.wakes)
            guard !held.isEmpty else { return nil }
            return wake(held)
        }

        /// Whether commits are kept in the inbox without a round, every query held back: they may alter any result.
        var hasKeptCommits: Bool { schedule.isKeeping && !inbox.changes.isEmpty }

        /// Whether `query` has changes waiting — held back for it, or kept commits that may touch it — and is not yet
        /// to be woken.
        func canWake(_ query: DocumentQuery) -> Bool {
            (evaluations[query]?.schedule.isHeld == true || hasKeptCommits) && !inbox.wakes.contains(query)
        }

        /// Wakes held-back queries (see ``canWake(_:)``): the consumer applies their changes in its next round.
        /// Returns the consumer to resume, if it waits.
        mutating func wake(_ queries: some Sequence<DocumentQuery>) -> (EngineInbox.Consumer, EngineInbox.Work)? {
            schedule.wake()
            return handedOver(inbox.wake(queries))
        }

        /// Notes work handed to a parked consumer (`resume`, if any), and returns it, to be resumed outside the lock.
        mutating func handedOver(
            _ resume: (EngineInbox.Consumer, EngineInbox.Work)?
        ) -> (EngineInbox.Consumer, EngineInbox.Work)? {
            if let resume { schedule.handedOver(owesWork: resume.1.isOwed) }
            return resume
        }

        /// Changes `query`'s evaluation in place; nil when it has none. Found through its index: `evaluations[query]?.x
        /// = …` goes through the dictionary's `modify` coroutine, whose frame — big enough for a whole `Evaluation?` —
        /// is allocated on the heap at every call.
        @discardableResult
        mutating func withEvaluation<R>(of query: DocumentQuery, _ body: (inout Evaluation) -> R) -> R? {
            guard let index = evaluations.index(forKey: query) else { return nil }
            return body(&evaluations.values[index])
        }

        func isCaughtUp(with commit: UInt64) -> Bool {
            catchUp.isCaughtUp(with: commit, owedWork: hasOwedWork, observing: isObserving)
        }

        mutating func takeCaughtUpWaiters() -> [CheckedContinuation<Void, Never>] {
            catchUp.takeReady(owedWork: hasOwedWork, observing: isObserving)
        }
    }

    /// Above this many changed documents in one collection, the query is simply run again: reading that many
    /// documents by `_id` costs about what one query over a 10,000-document collection does.
    static let relevanceCheckLimit = 512

    /// How many observers a round checks for dead owners (see ``round(_:)`` and `LiveQueryEngine+Sweep`).
    static let sweepPerRound = 128

    /// While every query is held back, commits wake nothing; one in this many checks up to ``sweepPerRound``
    /// observers (going round the table) for owners that died, and only if one did runs a round, which sweeps it —
    /// an observer whose owner died while busy would otherwise hold its query back, and stay registered, until a
    /// signal that never comes. (The check costs one lock and at most 128 weak
    /// loads, where a round would cost the writer's core a wake-up.) Commits are counted from the last check, or from the last round
    /// that took the kept commits; rounds that only sweep take none, and do not start the count again.
    static let heldCommitsPerCheck = 16

    let documents: any DocumentStore
    let logger: Logger
    /// How long the writer must be quiet before held-back results are computed anyway; nil: only on a signal.
    let quietPeriod: Duration?
    /// Whether held-back results are computed just before a busy observer is due to signal (see ``SignalPace``).
    let anticipatesSignals: Bool
    /// When a failed query is run again without a commit.
    let retry: EvaluationRetry
    let timeSource: any TimeSource
    let state = LockedValue(State())
    /// Where the consumer and the engine's timers run: a serial queue of the engine's own, off Swift concurrency's
    /// cooperative pool, so that evaluations and hand-overs keep their pace whatever else the process runs there (a
    /// pool of two threads on two cores, both held by someone's CPU-bound task, once stalled them for seconds).
    let executor = DispatchQueueExecutor(label: "tether.live-query.engine")
    /// Every observer, with its owner: OwnershipKit's rules, the same as a resource's observers.
    let observers = ObserverTable<Registration, Never>(deliver: Registration.deliver)
    /// The last commit received from the feed (advanced under the engine's lock, by the writer's thread): read by the
    /// quiet watch, the computations ahead of a signal and the check a lane makes at its observer's signal.
    let receivedCommit = Watermark()
    /// The store's writes in flight: counted by ``Store``, read when a computation ahead of a signal comes due.
    let writes = WritesInFlight()

    init(documents: any DocumentStore, configuration: Store.Configuration, logger: Logger) {
        self.documents = documents
        self.logger = logger
        self.quietPeriod = configuration.quietPeriod
        self.anticipatesSignals = configuration.anticipatesSignals
        self.retry = configuration.retry
        self.timeSource = configuration.timeSource
        LifetimeTracking.made(self, "live-query engine")
    }

    /// Ends the consumer's wait, if it waits, or its next wait: nothing can reach it any more.
    deinit {
        state.withLock { state in
            state.isEngineGone = true
            return state.inbox.waiting.take()
        }?.resume(returning: nil)
    }

    var statistics: LiveQueryStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.queries = state.evaluations.count
            statistics.observers = state.evaluations.values.reduce(0) { $0 + $1.schedule.members.count }
            statistics.idleObservers = state.evaluations.values.reduce(0) { $0 + $1.schedule.idleCount }
            statistics.caughtUpCommit = state.catchUp.applied
            return statistics
        }
    }

    /// Whether the consumer task is running (anything is observed).
    var isConsuming: Bool {
        state.withLock { $0.consumer != nil }
    }

    // MARK: Registering

    /// Adds an observer: the consumer starts it (its first result) in its next round.
    func register(_ registration: Registration) {
        while true {
            if state.withLock({ $0.subscription == nil }) { subscribe() }
            enum Outcome {
                case stopped, unsubscribed
                case added((EngineInbox.Consumer, EngineInbox.Work)?)
            }
            let outcome = state.withLock { state -> Outcome in
                // Ended before it got here (its owner died at once): unregister found nothing to remove.
                guard !registration.isStopped else { return .stopped }
                // The last observer left while this one subscribed: subscribe again.
                guard state.subscription != nil else { return .unsubscribed }
                state.registered.insert(ObjectIdentifier(registration))
                state.schedule.wake()
                let resume = state.handedOver(state.inbox.add(registration))
                if state.consumer == nil { state.consumer = self.startConsumer() }
                return .added(resume)
            }
            switch outcome {
            case .stopped: return
            case .unsubscribed: continue
            case .added(let resume):
                if let resume { resume.0.resume(returning: resume.1) }
                return
            }
        }
    }

    /// Subscribes to the feed (outside the lock: a closed store's feed calls back at once). Every commit after the
    /// one the feed reports now reaches the inbox; results evaluated from here on are no older than it.
    func subscribe() {
        let feed = documents.changes
        let subscription = feed.subscribeInline { [weak self] changes in
            self?.receive(changes)
        } finished: { [weak self] in
            self?.feedEnded()
        }
        let surplus = state.withLock { state -> ChangeSubscription? in
            guard state.subscription == nil else { return subscription }
            state.subscription = subscription
            state.catchUp.applied = max(state.catchUp.applied, feed.lastCommit)
            return nil
        }
        surplus?.cancel()
    }

    /// Removes an observer (idempotent); the last one out ends the feed subscription and the consumer.
    func unregister(_ registration: Registration) {
        registration.stop()
        registration.lane.cancel()
        struct Released {
            var evaluation: Evaluation?
            var subscription: ChangeSubscription?
            var consumer: EngineInbox.Consumer?
            var waiters: [CheckedContinuation<Void, Never>] = []
        }
        let released = state.withLock { state -> Released? in
            guard state.registered.remove(ObjectIdentifier(registration)) != nil else { return nil }
            state.inbox.remove(registration)
            var released = Released()
            // In place: a copy of the evaluation would share its observers' table with the one left in, and removing
            // one from it would copy them all; taking the evaluation out and putting it back would hash its query's
            // neighbours in the table again, and hashing a query walks its whole predicate.
            if let index = state.evaluations.index(forKey: registration.query) {
                // Under the lock under which `start` joined it, if it did.
                state.evaluations.values[index].schedule.remove(ObjectIdentifier(registration))
                if state.evaluations.values[index].schedule.members.isEmpty {
                    let evaluation = state.evaluations.remove(at: index).value
                    state.relevance.remove(registration.query, holding: evaluation.ids)
                    released.evaluation = evaluation
                }
            }
            if !state.isObserving {
                // Nothing to bring up to date any more: the consumer ends, and so do its inbox and subscription.
                released.subscription = state.subscription.take()
                state.inbox.changes = PendingChanges()
                if let consumer = state.inbox.waiting.take() {
                    released.consumer = consumer
                    state.consumer = nil
                }
            }
            released.waiters = state.takeCaughtUpWaiters()
            return released
        }
        guard let released else { return }
        // Outside the lock: the documents and the subscription are released, the waiting are resumed.
        released.subscription?.cancel()
        released.consumer?.resume(returning: nil)
        for waiter in released.waiters { waiter.resume() }
    }

    // MARK: The consumer

    /// One commit's changes, on the writer's thread: into the inbox, and to the consumer if it waits — or kept there
    /// while every query is held back (``LiveQuerySchedule/commitReceived(at:inboxIsFull:consumerWaits:watchesForQuiet:received:)``).
    func receive(_ changes: ChangeSet) {
        let now = moment
        let (resume, watch, check) = state.withLock {
            state -> ((EngineInbox.Consumer, EngineInbox.Work)?, Bool, Bool) in
            guard state.subscription != nil else { return (nil, false, false) }
            receivedCommit.advance(to: changes.commits.upperBound)
            let route = state.schedule.commitReceived(
                at: now, inboxIsFull: state.inbox.changes.isFull, consumerWaits: state.inbox.waiting != nil,
                watchesForQuiet: quietPeriod != nil, received: receivedCommit.value)
            switch route {
            case .keep(let watchForQuiet):
                state.inbox.keep(changes)  // for the round an idle observer or a new one starts
                state.statistics.deferrals += 1
                return (nil, watchForQuiet, state.inbox.changes.isCheckDue(every: Self.heldCommitsPerCheck))
            case .toConsumer:
                return (state.handedOver(state.inbox.add(changes)), false, false)
            }
        }
        if let resume { resume.0.resume(returning: resume.1) }
        if watch { watchForQuiet() }
        // Outside the engine's lock: the table's is taken alone.
        if check, observers.hasEnded(atMost: Self.sweepPerRound) { wakeToSweep() }
    }

    /// Every query is held back and an observer's owners have died: the consumer runs a round — the commits kept
    /// so far, merged into the held-back changes, and a sweep that releases the observer (see
    /// ``LiveQuerySchedule/deadOwnerFound()``).
    func wakeToSweep() {
        let resume = state.withLock { state -> (EngineInbox.Consumer, EngineInbox.Work)? in
            guard state.schedule.deadOwnerFound() else { return nil }
            let resume = state.handedOver(state.inbox.resumeIfWaiting())
            if resume == nil { state.schedule.deadOwnerCheck = .due }
            return resume
        }
        if var resume {
            resume.1.isSweepDue = true
            resume.0.resume(returning: resume.1)
        }
    }

    /// The store was closed: nothing more will be committed, so whoever waits for a commit is done waiting.
    func feedEnded() {
        let waiters = state.withLock { state in
            state.catchUp.feedEnded = true
            return state.takeCaughtUpWaiters()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Starts the consumer: one round per take of the inbox, in commit order, until nothing is observed. While it
    /// waits for work it holds the engine's state, not the engine: an engine nobody uses any more (its store and
    /// handles gone, only observers whose owners died left registered) is deallocated, and its deinit ends the wait.
    func startConsumer() -> Task<Void, Never> {
        Task(executorPreference: executor) { [weak self, state] in
            while let work = await Self.nextWork(in: state) {
                guard let self else { return }
                await self.round(work)
            }
        }
    }

    /// One round: ends observers whose owners died, applies the changes, brings up to date the queries an observer
    /// is ready for, runs again failed queries whose retry is due, starts the new observers.
    func round(_ work: consuming EngineInbox.Work) async {
        // The commits' sets, merged here rather than by the writer that handed them over — into the first one's own
        // tables: the inbox gave the work up, so nothing else shares them.
        let onlyStarts = work.onlyStarts
        let changes = work.changes.takeMerged()
        // The stopped notices of observers whose owners are gone unregister them. A bounded number per round, going
        // round the table: a round costs the same with 10,000 observers as with 100, and an observer whose owner
        // died is released within one trip round it, or once the writer pauses (its handler is never called: that
        // is checked at the call). A round that only starts new observers checks none: each observer added counts
        // toward the observer table's own sweep of the whole table, which comes once the additions (and removals by
        // owner) since the last one match the entries it left live — an owner that died is found before as many more
        // observers have started as the table held, as with a share in every round. Observers started in a burst
        // come two or three to a round: 128 checks in each went round a table filling to 10,000 about 55 times.
        if !onlyStarts {
            let unvisited = observers.sweep(atMost: Self.sweepPerRound)
            // After changes, the rest of the table is swept once the writer pauses; each round without looks at
            // its share. (A table this round looked at whole owes nothing: no round that only sweeps.)
            let watch = state.withLock {
                $0.schedule.swept(unvisited: unvisited, afterChanges: changes != nil, received: receivedCommit.value)
            }
            if watch { watchForSweepQuiet() }
        }
        if let changes { await apply(changes, countedAsHeld: work.changes.wereAllHeldBack, woken: work.wakes) }
        for query in work.wakes { await applyDeferred(query) }
        for query in work.retries { await runRetry(query) }
        for registration in work.registrations where !registration.isGone { await start(registration) }
        finishRound(through: changes?.commits.upperBound)
        // Each round gives Swift concurrency's thread back: over a store whose reads never suspend (in memory), a
        // consumer fed without pause would hold the thread for as long as work kept coming.
        await Task.yield()
    }

    /// Calls `body` with the engine once `delay` has passed on the time source — unless the engine has been released
    /// meanwhile: a timer that does not keep the engine alive (a failed query's retry, a computation ahead of a
    /// signal). `body` runs on the time source's timer (``TetherClock/TimeSource/schedule(after:_:)``) and only
    /// decides under the lock and hands work to the consumer: on Linux the system clock's timer thread, which a
    /// scheduled call wakes once.
    @discardableResult
    func after(_ delay: Duration, _ body: @escaping @Sendable (LiveQueryEngine) -> Void) -> ScheduledCall {
        timeSource.schedule(after: delay) { [weak self] in
            if let self { body(self) }
        }
    }

    /// The next round's work, waiting for it if there is none; nil once nothing is observed (the consumer ends).
    static func nextWork(in state: LockedValue<State>) async -> EngineInbox.Work? {
        await state.takeOrPark(\.inbox.waiting) { state -> EngineInbox.Work?? in
            // Every query held back: commits that came during the last round stay in the inbox with those kept from
            // now on, until something wakes the consumer. Those appended while the last round ran, before it held
            // every query back, are counted as held back here, as `receive` counts those it keeps, and toward the
            // check for dead owners: when one is due, a round that only sweeps makes it.
            let keeps = state.schedule.keepsInbox(inboxHoldsOnlyChanges: state.inbox.holdsOnlyChanges)
            if keeps {
                state.statistics.deferrals += state.inbox.changes.countAsHeldBack()
                if state.inbox.changes.isCheckDue(every: heldCommitsPerCheck) { state.schedule.deadOwnerCheck = .due }
            }
            if !keeps, var work = state.inbox.take() {
                state.schedule.handedOver(owesWork: work.isOwed)
                work.isSweepDue = state.schedule.takeDeadOwnerCheck()  // the round sweeps first
                return .some(work)
            }
            guard state.isObserving, !state.isEngineGone else {
                state.schedule.round = .owesNothing
                state.consumer = nil
                return .some(nil)  // the end: nothing is observed
            }
            if state.schedule.takesSweepRound() { return .some(EngineInbox.Work()) }
            return nil  // park until there is work
        }
    }

    /// Records a finished round and resumes whoever waited for what it reached.
    func finishRound(through commit: UInt64?) {
        let opened = documents.changes.startCommit
        let (waiters, watch) = state.withLock { state in
            state.statistics.rounds += 1
            state.schedule.round = .owesNothing
            if let commit { state.catchUp.applied = max(state.catchUp.applied, commit) }
            // The commits the store's data held when it opened, never published (see waitUntilCaughtUp).
            if state.subscription != nil { state.catchUp.applied = max(state.catchUp.applied, opened) }
            // Queries held back at commits someone waits for go into the next round (the consumer runs: nothing
            // to resume).
            if let waited = state.catchUp.waiters.lazy.map(\.commit).max() { _ = state.wakeHeld(through: waited) }
            let watch = state.schedule.roundFinished(
                allHeld: Self.allHeld(state), hasHeld: state.relevance.hasHeld, watchesForQuiet: quietPeriod != nil,
                inboxHasChanges: !state.inbox.changes.isEmpty, received: receivedCommit.value)
            return (state.takeCaughtUpWaiters(), watch)
        }
        for waiter in waiters { waiter.resume() }
        if watch { watchForQuiet() }
    }

    /// A new observer: the current result at once if its query is already evaluated and up to date, else after
    /// evaluating it (a failing query runs again: the new observer gets its result or its failure, not the last good
    /// result from before) — or, when its changes are held back for busy observers, after applying them: the result
    /// the others last took predates commits this observer may have made before it registered.
    func start(_ registration: Registration) async {
        // The clock is read before the lock, which stays short.
        let now = anticipatesSignals ? timeSource.elapsed : nil
        enum Start {
            case current(Snapshot)
            case evaluate
            case applyHeld
        }
        let started = state.withLock { state -> Start? in
            // Stopped while it waited: unregister has run, or will find nothing to remove.
            guard state.registered.contains(ObjectIdentifier(registration)), !registration.isStopped
            else {
                return nil
            }
            // In place (see `unregister`), through its index (see `State.withEvaluation`).
            let found = state.evaluations.index(forKey: registration.query)
            if found.map({ state.evaluations.values[$0].schedule.members.isEmpty }) ?? true {
                state.relevance.add(registration.query)
            }
            let index =
                found
                ?? {
                    state.evaluations[registration.query] = Evaluation()
                    return state.evaluations.index(forKey: registration.query)!
                }()
            // Joined under the lock that checked it is registered, which unregister takes to leave: it leaves after
            // this, or was stopped before. Read in place: a copy of the evaluation would share its observers' table,
            // which joining would then copy whole.
            let isEvaluated = state.evaluations.values[index].isEvaluated
            let (isHeld, isFailing) = (
                state.evaluations.values[index].schedule.isHeld, state.evaluations.values[index].schedule.isFailing
            )
            let isCurrent = isEvaluated && !isHeld && !isFailing
            state.evaluations.values[index].schedule.join(registration, idle: !isCurrent, at: now)
            guard isCurrent else { return isEvaluated && !isFailing ? .applyHeld : .evaluate }
            let evaluation = state.evaluations.values[index]
            return .current(
                Snapshot.documents(
                    evaluation.documents, commit: evaluation.exactCommit(applied: state.catchUp.applied),
                    content: evaluation.content))
        }
        switch started {
        case nil: return  // not started: stopped while it waited
        case .current(let snapshot): handOut(snapshot, to: [registration])
        case .evaluate: await evaluate(registration.query)
        case .applyHeld: await applyDeferred(registration.query)
        }
    }

    // MARK: Catching up

    /// Returns once the live queries have caught up with `commit`: every change up to it has been applied to every
    /// observed query, whose result — exact at that commit or a later one — has been offered to its observers' lanes
    /// (a query held back while its observers were busy is brought up to date for it), and every observer registered
    /// before this call has been started. Returns at once when nothing is observed,
    /// when the store is closed, or when the calling task is cancelled.
    func waitUntilCaughtUp(with commit: UInt64) async {
        // Commits the store's data held when it opened are never published: a consumer subscribed before it opened
        // has applied them all the same.
        let opened = documents.changes.startCommit
        let id = state.withLock { state -> UInt64 in
            if state.subscription != nil { state.catchUp.applied = max(state.catchUp.applied, opened) }
            state.catchUp.nextWaiterID += 1
            return state.catchUp.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (done, resume) = state.withLock { state -> (Bool, (EngineInbox.Consumer, EngineInbox.Work)?) in
                    if Task.isCancelled { return (true, nil) }
                    // A query held back while its observers are busy is brought up to date now, not when one signals.
                    let resume = state.wakeHeld(through: commit)
                    if state.isCaughtUp(with: commit) { return (true, resume) }
                    state.catchUp.waiters.append((id, commit, continuation))
                    return (false, resume)
                }
                if let resume { resume.0.resume(returning: resume.1) }
                if done { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.catchUp.take(id: id) }?.resume()
        }
    }
}
