public import TetherConcurrency

extension ObserverTable {
    /// After a mutation: drains if this thread became the drainer; for a removal, returns what is left to wait
    /// for (see ``Settling``).
    @inlinable
    func settle(_ outcome: Outcome) -> Settling? {
        if outcome.mustDrain { drain() }
        guard outcome.waitTicket != 0 else { return nil }
        return Settling(delivered: delivered, ticket: outcome.waitTicket, calls: outcome.ended)
    }

    /// After a mutation that waits for nothing: drains if this thread became the drainer.
    @inlinable
    func finish(_ outcome: Outcome) {
        if outcome.mustDrain { drain() }
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
                delivered.advance(to: ticket)
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
        guard entry.pointee.life.isOpen else { return }
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
}
