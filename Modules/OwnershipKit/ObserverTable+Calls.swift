public import Synchronization
public import TetherConcurrency

/// One observer's entry in an ``ObserverTable``: what a delivery made outside the table (by a lane, in a task) gives
/// back to the table to ask whether the observer may be called now.
public struct ObserverID: Hashable, Sendable {
    @usableFromInline let rawValue: UInt64

    @inlinable
    init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }
}

/// Calls made outside the table: the rule that ownership holds at the moment of delivery.
///
/// A delivery that waits — in a lane behind a slow handler, on a queue, for `signalNext` — was decided while the
/// observer's owners were alive; by the time it runs they may be gone. So whoever finally calls the observer's code
/// asks the table first, with ``withLiveObserver(_:_:)``: the call happens only if the observer still observes and
/// one of its owners is alive, and that owner stays alive until the call returns. Otherwise nothing is called, the
/// caller drops its payload, and an observer whose owners all died is ended on the spot (its
/// ``ObserverNotice/stopped`` notice queued, exactly once).
extension ObserverTable {
    /// Runs `body` as a call of observer `id` if it may be called now; returns nil, running nothing, if not.
    ///
    /// It may be called when its entry is still in the table (not removed, not ended) and an owner is alive — an
    /// external owner, or the observer itself when it owns itself. That owner is kept alive until `body` returns,
    /// and a removal that ends the observer meanwhile waits for `body` to return (unless the removal is made from
    /// inside a callback). `body` runs marked as delivering, so removals made from inside it never wait.
    ///
    /// When the owner it kept alive dies as the call returns — every other reference to it was dropped meanwhile —
    /// the observer is ended there and then, as a sweep would end it: a sweep that looked at it during the call saw
    /// the owner alive, and no later one may come (no commit, no notification).
    @inlinable
    public func withLiveObserver<Result>(_ id: ObserverID, _ body: () throws -> Result) rethrows -> Result? {
        guard var call = admit(id) else { return nil }
        defer { end(&call) }
        return try DeliveryContext.delivering(body)
    }

    /// ``withLiveObserver(_:_:)`` for an asynchronous call: the owner stays alive, and the call counts as running,
    /// until `body` returns, across its suspensions.
    @inlinable
    public func withLiveObserver<Result>(
        _ id: ObserverID, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> Result? {
        guard var call = admit(id) else { return nil }
        defer { end(&call) }
        return try await DeliveryContext.deliveringAsynchronously(body)
    }

    /// Whether observer `id` observes right now: still in the table, with an owner alive.
    @inlinable
    public func isObserving(_ id: ObserverID) -> Bool {
        // The only strong reference made under the lock is the one returned, released here outside it.
        let alive = state.withLock { state -> AnyObject? in
            state.index(of: id.rawValue).flatMap { state.entries[$0].anyLiveOwnerAndReference()?.alive }
        }
        return alive != nil
    }

    /// Ends observer `id` whatever its owners: it gets its ``ObserverNotice/stopped`` notice, and when this returns
    /// it receives nothing further and no call of it is running (the exception, as for
    /// `removeObservers(ownedBy:)`: called from inside a callback, it does not wait). Ending it again does nothing.
    @inlinable
    public func remove(_ id: ObserverID) {
        settle(ending(id))?.wait()
    }

    /// ``remove(_:)``, suspending instead of blocking while a call in progress finishes.
    @inlinable
    public func remove(_ id: ObserverID) async {
        await settle(ending(id))?.wait()
    }

    /// `remove(_:)` without waiting for anything: for a `deinit`, which must never wait. No call of the observer
    /// begins after this returns; one already running finishes undisturbed.
    @inlinable
    public func removeWithoutWaiting(_ id: ObserverID) {
        _ = settle(ending(id))
    }

    // MARK: The mechanism

    /// A call begun by ``admit(_:)``: the entry's gate it entered, and the owner it keeps alive until ``end(_:)``.
    @usableFromInline
    struct LiveCall {
        @usableFromInline let id: ObserverID
        @usableFromInline let gate: CallGate
        /// The live owner, held strongly for the call's duration.
        @usableFromInline var keepAlive: AnyObject?
        /// The entry's weak reference to that owner: whether it outlived the call.
        @usableFromInline let owner: WeakReference

        @inlinable
        init(id: ObserverID, gate: CallGate, keepAlive: AnyObject, owner: WeakReference) {
            self.id = id
            self.gate = gate
            self.keepAlive = keepAlive
            self.owner = owner
        }
    }

    /// Under the lock: begins a call of `id` and takes a live owner, or, when every owner is dead, ends the entry.
    @inlinable
    func admit(_ id: ObserverID) -> LiveCall? {
        var graveyard = Graveyard<Observer>()
        let (admitted, outcome) = state.withLock { state -> (LiveCall?, Outcome) in
            var outcome = Outcome()
            guard let index = state.index(of: id.rawValue) else { return (nil, outcome) }
            let gate = state.entries[index].life
            // The only strong reference made under the lock is `alive`: returned, or set aside, never released here.
            guard let (alive, owner) = state.entries[index].anyLiveOwnerAndReference() else {
                _ = state.settle(at: index, &graveyard, &outcome)
                state.claimDrain(&outcome)
                return (nil, outcome)
            }
            // Entries `index(of:)` finds are open (ending one closes and hollows it under this lock), so this holds.
            guard gate.enter() else {
                graveyard.keep(alive)
                return (nil, outcome)
            }
            return (LiveCall(id: id, gate: gate, keepAlive: alive, owner: owner), outcome)
        }
        finish(outcome)
        return admitted
    }

    /// Ends a call: lets the owner go, outside any lock — its `deinit` may run here — and, if it died, settles the
    /// entry, which ends it when no other owner is alive.
    @inlinable
    func end(_ call: inout LiveCall) {
        call.gate.exit()
        call.keepAlive = nil
        guard call.owner.object == nil else { return }
        var graveyard = Graveyard<Observer>()
        let outcome = state.withLock { state in
            var outcome = Outcome()
            if let index = state.index(of: call.id.rawValue) { _ = state.settle(at: index, &graveyard, &outcome) }
            state.claimDrain(&outcome)
            return outcome
        }
        finish(outcome)
    }

    /// Under the lock: ends entry `id`; returns what the caller must finish.
    @inlinable
    func ending(_ id: ObserverID) -> Outcome {
        var graveyard = Graveyard<Observer>()
        return state.withLock { state in
            var outcome = Outcome()
            if let index = state.index(of: id.rawValue) {
                // One load of the weak reference, kept for release outside the lock.
                let alive = state.entries[index].object?.object
                if let alive { graveyard.keep(alive) }
                let project = state.entries[index].project
                let last = state.entries[index].strong.take()?.observer ?? alive.flatMap { project?($0) }
                state.end(at: index, last: last, &graveyard, &outcome)
            }
            state.claimDrain(&outcome)
            outcome.waitTicket = state.lastTicket
            return outcome
        }
    }
}

/// An observer's ``ObserverID``, known from the moment it joins its table — before any notice can reach it — for
/// an observer whose deliveries run outside the table (a lane) and must ask the table at the moment of each call.
///
/// ```swift
/// let binding = ObserverBinding()
/// let lane = DeliveryLane<Temperature>.deliverOn(.serialQueue()) { delivery in
///     guard let id = binding.id else { return }
///     table.withLiveObserver(id) { panel.show(delivery.payload) }  // not after the owner's deinit
/// }
/// table.add(LaneObserver(lane), identity: nil, owner: screen, binding: binding)
/// ```
public final class ObserverBinding: Sendable {
    @usableFromInline let raw = Atomic<UInt64>(0)

    /// Makes an unbound binding.
    public init() {}

    /// The observer's id, once it has joined its table.
    @inlinable
    public var id: ObserverID? {
        let raw = raw.load(ordering: .acquiring)
        return raw == 0 ? nil : ObserverID(raw)
    }

    @inlinable
    func bind(_ id: ObserverID) {
        raw.store(id.rawValue, ordering: .releasing)
    }
}
