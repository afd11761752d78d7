import Dispatch
public import TetherConcurrency

/// A store's change feed: after each commit that changed something, every subscriber receives a ``ChangeSet`` —
/// never for a rollback, and never while the writer waits. Each subscriber has its own lane: while its handler is
/// busy, later sets are merged into one pending set (see ``ChangeSet/merge(_:)``), so a slow subscriber costs at
/// most one pending set, however fast the writes come.
///
/// ```swift
/// let subscription = store.changes.subscribe { changes in
///     for (key, kind) in changes.changes { print(key.collection, key.id, kind) }
/// }
/// // …
/// subscription.cancel()  // or let it go: a subscription also ends when it is deinitialized
/// ```
public final class ChangeFeed: Sendable {
    /// The subscribers, in the order they came, and whether the feed has finished. An array, not a table: a feed has
    /// a handful, and each commit takes them as they are — a copy that shares the array's storage, no allocation.
    let subscribers = LockedValue(Subscribers())
    let commitCounter = LockedValue<UInt64>(0)
    let openedCommit = LockedValue<UInt64>(0)

    /// Makes a feed with no subscribers.
    public init() {}

    /// Calls `handler` with each commit's changes, one call at a time, on a serial dispatch queue of its own — never
    /// a shared one, so a slow handler holds up nobody else (not the writer, not other subscribers, not Swift
    /// concurrency's threads).
    public func subscribe(_ handler: @escaping @Sendable (ChangeSet) -> Void) -> ChangeSubscription {
        let subscriber = ChangeSubscriber(
            mode: .queue(DispatchQueue(label: "tether.persistence.change-feed"), handler))
        register(subscriber)
        return ChangeSubscription(feed: self, subscriber: subscriber)
    }

    /// Hands each commit's changes to `receive` on the publishing thread, right after the commit and in commit order,
    /// and calls `finished` once when the feed ends (the store closed; not when the subscription is cancelled). For consumers that keep an inbox of their own (LiveQueryKit's
    /// engine): `receive` must only hand the set over — never block, never call the store — since the writer's next
    /// commit waits for it. Nothing merges sets here: the consumer's inbox is the one place they coalesce.
    public func subscribeInline(
        _ receive: @escaping @Sendable (ChangeSet) -> Void, finished: @escaping @Sendable () -> Void
    ) -> ChangeSubscription {
        let subscriber = ChangeSubscriber(mode: .inline(receive, finished: finished))
        register(subscriber)
        return ChangeSubscription(feed: self, subscriber: subscriber)
    }

    /// The changes as an `AsyncSequence`: each `next()` returns everything committed since the previous one,
    /// merged. It ends when the store is closed.
    public func stream() -> ChangeStream {
        let subscriber = ChangeSubscriber(mode: .pull)
        register(subscriber)
        return ChangeStream(subscription: ChangeSubscription(feed: self, subscriber: subscriber))
    }

    /// The number of active subscriptions.
    public var subscriberCount: Int {
        subscribers.withLock { $0.list.count }
    }

    /// The number of the last commit published — or, before the first, the commit the store's data was at when it
    /// opened (``start(at:)``): 0 for a new store.
    public var lastCommit: UInt64 {
        commitCounter.withLock { $0 }
    }

    // MARK: For stores

    /// Publishes one commit's changes (for ``DocumentStore`` implementations: call it after the commit, in commit
    /// order, never for a rollback), under the commit number the store gave it — the number its readers report as
    /// `DocumentReader.commit`. An empty set is not published. Pass the changed documents as the commit left them
    /// when they are at hand, so that consumers need not read them back (``ChangeSet/documents``).
    public func publish(
        _ changes: [ChangeSet.Key: ChangeSet.Kind], commit: UInt64, documents: [ChangeSet.Key: StoredDocument]? = nil
    ) {
        guard !changes.isEmpty else { return }
        offer(ChangeSet(commit: commit, changes: changes, documents: documents))
    }

    /// Says which commit the store's data is at as it opens (for ``DocumentStore`` implementations, before the first
    /// publish): ``lastCommit`` starts there, so that waiting for a commit the data already holds — one a read
    /// reported — does not wait for a later one.
    public func start(at commit: UInt64) {
        openedCommit.withLock { $0 = max($0, commit) }
        commitCounter.withLock { $0 = max($0, commit) }
    }

    /// The commit the store's data was at when it opened (``start(at:)``): no change set up to it is ever published,
    /// so a consumer that subscribed before the store opened has, in effect, applied every one.
    public var startCommit: UInt64 {
        openedCommit.withLock { $0 }
    }

    /// Publishes that the changes of `commits` are not known (for stores whose change log lost them): every
    /// consumer must read again (``ChangeSet/hasUnknownChanges``).
    public func publishUnknownChanges(in commits: ClosedRange<UInt64>) {
        offer(ChangeSet(unknownChangesIn: commits))
    }

    /// Counts `set`'s commits and hands it to every subscriber.
    private func offer(_ set: ChangeSet) {
        commitCounter.withLock { $0 = max($0, set.commits.upperBound) }
        for subscriber in subscribers.withLock({ $0.list }) { subscriber.offer(set) }
    }

    /// Ends every subscription (for stores, when they close): handlers are no longer called, streams end.
    public func finish() {
        let all = subscribers.withLock { subscribers in
            subscribers.isFinished = true
            defer { subscribers.list = [] }
            return subscribers.list
        }
        for subscriber in all { subscriber.finish(feedEnded: true) }
    }

    /// Adds `subscriber`, or finishes it at once when the feed has finished — one decision under the lock that
    /// ``finish()`` takes, so that none is added after the feed ended and left waiting.
    func register(_ subscriber: ChangeSubscriber) {
        let added = subscribers.withLock { subscribers in
            guard !subscribers.isFinished else { return false }
            subscribers.list.append(subscriber)
            return true
        }
        if !added { subscriber.finish(feedEnded: true) }
    }

    func remove(_ subscriber: ChangeSubscriber) {
        let removed = subscribers.withLock { subscribers -> ChangeSubscriber? in
            guard let index = subscribers.list.firstIndex(where: { $0 === subscriber }) else { return nil }
            return subscribers.list.remove(at: index)
        }
        removed?.finish(feedEnded: false)
    }

    struct Subscribers: Sendable {
        var list: [ChangeSubscriber] = []
        var isFinished = false
    }
}

/// A change-feed subscription. It ends on ``cancel()`` or when deinitialized.
public final class ChangeSubscription: ObservationCancellable {
    let feed: ChangeFeed
    let subscriber: ChangeSubscriber

    init(feed: ChangeFeed, subscriber: ChangeSubscriber) {
        self.feed = feed
        self.subscriber = subscriber
    }

    /// Ends the subscription: the handler is not called again (a call in progress finishes).
    public func cancel() {
        feed.remove(subscriber)
    }

    deinit {
        feed.remove(subscriber)
    }
}

/// One subscriber: inline (handed each set on the publishing thread), or a lane with at most one pending (merged)
/// set, delivered one at a time on a queue or pulled by a stream.
final class ChangeSubscriber: Sendable {
    enum Mode: Sendable {
        /// The handler runs on the subscriber's own serial queue.
        case queue(DispatchQueue, @Sendable (ChangeSet) -> Void)
        /// `receive` runs on the publishing thread; `finished` once when the feed ends.
        case inline(@Sendable (ChangeSet) -> Void, finished: @Sendable () -> Void)
        /// A stream's consumer pulls.
        case pull
    }

    struct State: Sendable {
        var pending: ChangeSet?
        /// Which queue-mode drain hands sets to the handler (see `Drainer`).
        var drainer = Drainer()
        var waiter: CheckedContinuation<ChangeSet?, Never>?
        var isFinished = false
    }

    let mode: Mode
    let state = LockedValue(State())

    init(mode: Mode) {
        self.mode = mode
    }

    func offer(_ set: ChangeSet) {
        enum Action {
            case none
            case drain(DispatchQueue)
            case resume(CheckedContinuation<ChangeSet?, Never>)
        }
        if case .inline(let receive, _) = mode {
            if !state.withLock({ $0.isFinished }) { receive(set) }
            return
        }
        let action = state.withLock { state -> Action in
            guard !state.isFinished else { return .none }
            if let waiter = state.waiter.take() { return .resume(waiter) }
            if state.pending == nil { state.pending = set } else { state.pending!.merge(set) }
            guard case .queue(let queue, _) = mode, state.drainer.claim() else { return .none }
            return .drain(queue)
        }
        switch action {
        case .none: break
        case .resume(let waiter): waiter.resume(returning: set)
        case .drain(let queue): queue.async { self.drain() }
        }
    }

    func drain() {
        guard case .queue(_, let handler) = mode else { return }
        state.drain(
            \.drainer,
            next: { state in
                guard !state.isFinished, let set = state.pending.take(), !set.isEmpty else {
                    state.pending = nil
                    return nil
                }
                return set
            }, handle: handler)
    }

    /// The next set: the pending one at once, or the next published.
    func next() async -> ChangeSet? {
        await withTaskCancellationHandler {
            await state.takeOrPark(\.waiter) { state -> ChangeSet?? in
                if let pending = state.pending.take(), !pending.isEmpty { return .some(pending) }
                if state.isFinished || Task.isCancelled { return .some(nil) }
                return nil
            }
        } onCancel: {
            state.resumeParked(\.waiter, returning: nil)
        }
    }

    /// Ends the subscriber; `feedEnded` when the feed itself ended, which an inline subscriber is told.
    func finish(feedEnded: Bool) {
        let (waiter, first) = state.withLock { state -> (CheckedContinuation<ChangeSet?, Never>?, Bool) in
            defer { state.isFinished = true }
            state.pending = nil
            return (state.waiter.take(), !state.isFinished)
        }
        waiter?.resume(returning: nil)
        if first, feedEnded, case .inline(_, let finished) = mode { finished() }
    }
}

/// The change feed as an `AsyncSequence` (see ``ChangeFeed/stream()``). Iterate it from one task.
public struct ChangeStream: AsyncSequence, ObservationCancellable {
    /// The sequence's elements.
    public typealias Element = ChangeSet

    let subscription: ChangeSubscription

    /// Makes the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(subscription: subscription)
    }

    /// Ends the stream: a pending `next()` returns nil.
    public func cancel() {
        subscription.cancel()
    }

    /// The iterator: each `next()` returns the changes since the previous one, merged.
    public struct Iterator: AsyncIteratorProtocol {
        let subscription: ChangeSubscription

        /// The next merged set, or nil once the stream has ended.
        public mutating func next() async -> ChangeSet? {
            await subscription.subscriber.next()
        }
    }
}
