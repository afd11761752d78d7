public import TetherConcurrency
public import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ObserverTable {
    /// After a mutation: drain if this thread became the drainer; otherwise, for a removal, wait until the
    /// drainer has delivered everything queued before it (never while this thread is itself delivering).
    @inlinable
    func finish(_ outcome: Outcome) {
        if outcome.mustDrain {
            drain()
        } else if outcome.waitTicket != 0, !DeliveryContext.isDelivering {
            waitUntilDelivered(outcome.waitTicket)
        }
    }

    /// Delivers queued jobs until the queue is empty, then gives up the drainer role.
    ///
    /// Each job is let go of only after the next lock: a snapshot shares its storage with the table's entries, and
    /// once the drainer lets go, a mutation under the lock may find that storage unique again and write in place.
    /// The reference count orders the drainer's reads before that write, but ThreadSanitizer cannot see through
    /// the Swift runtime's reference counting; releasing after a lock makes the order one it can see (and costs
    /// nothing: the loop takes that lock anyway).
    @inlinable
    func drain() {
        DeliveryContext.delivering {
            var finished: Job?
            while true {
                let next = state.withLock { $0.nextJob() }
                finished = nil
                guard let (job, ticket) = next else { break }
                run(job)
                deliveredTicket.store(ticket, ordering: .releasing)
                finished = job
            }
            _ = finished
        }
    }

    @inlinable
    func run(_ job: Job) {
        switch job {
        case .added(let entry):
            withUnsafePointer(to: entry) { deliver(.added, to: $0) }
        case .event(let event, let snapshot):
            let notice = ObserverNotice.event(event)
            // Through the buffer, borrowing each entry in place: no entry is copied per delivery.
            snapshot.withUnsafeBufferPointer { entries in
                guard var entry = entries.baseAddress else { return }
                for _ in 0..<entries.count {
                    deliver(notice, to: entry)
                    entry += 1
                }
            }
        case .stopped(let observer):
            deliver(observer, .stopped)
        }
    }

    /// Delivers to one entry if it is still observing, checking its owners first and keeping one alive
    /// until the callback returns.
    @inlinable
    func deliver(_ notice: ObserverNotice<Event>, to entry: UnsafePointer<ObserverEntry<Observer>>) {
        guard entry.pointee.life.isActive else { return }
        // The common case: held strongly for a live external owner. The observer is passed from its storage.
        if let strong = entry.pointee.strong, let owner = entry.pointee.liveOwner() {
            deliver(strong.observer, notice)
            withExtendedLifetime(owner) {}
            return
        }
        // Self-owned and held weakly: the observer's own object, alive, is what the delivery keeps alive.
        if entry.pointee.strong == nil, entry.pointee.isSelfOwned, let project = entry.pointee.project,
            let alive = entry.pointee.object?.object
        {
            if let observer = project(alive) { deliver(observer, notice) }
            withExtendedLifetime(alive) {}
            return
        }
        if let (observer, keepAlive) = entry.pointee.target() ?? reconcile(entry.pointee.id) {
            deliver(observer, notice)
            withExtendedLifetime(keepAlive) {}
        }
    }

    /// The slow path, when a snapshot shows no owner alive: settles the current entry under the lock (it may have
    /// gained owners since the snapshot) and returns whom to deliver to, if the entry still observes.
    @inlinable
    func reconcile(_ entryID: UInt64) -> (Observer, AnyObject)? {
        var graveyard = Graveyard<Observer>()
        let current: ObserverEntry<Observer>? = state.withLock { state in
            var outcome = Outcome()
            guard let index = state.index(of: entryID) else { return nil }
            guard state.settle(at: index, &graveyard, &outcome) else { return nil }
            return state.entries[index]
        }
        // This thread is the drainer, so a stopped notice queued above is delivered by the running drain loop.
        return current?.target()
    }

    /// Waits until the drainer has delivered the job with `ticket`.
    ///
    /// Polls with a backoff (yield, then sleeps of up to 1 ms): waits are rare — only a removal racing a
    /// delivery on another thread — and short, since callbacks are.
    @usableFromInline
    func waitUntilDelivered(_ ticket: UInt64) {
        var attempt = 0
        while deliveredTicket.load(ordering: .acquiring) < ticket {
            if attempt < 64 {
                sched_yield()
            } else {
                usleep(UInt32(min(1000, 1 << min(attempt - 64, 10))))
            }
            attempt += 1
        }
    }
}
