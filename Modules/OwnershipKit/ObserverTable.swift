public import TetherConcurrency

/// Observers with owners: the table that decides how long an observer lives and what it receives.
///
/// `ObserverTable` implements Siesta's ownership rules for any observer kind and any event type, thread-safely,
/// so that `ResourceKit` and `LiveQueryKit` (and your own observable types) build on one mechanism:
///
/// 1. An observation is contingent on one or more owners; owners can be any object; an observer may own itself.
/// 2. The table holds an observer **strongly** exactly while it has an owner other than itself, **weakly**
///    while it owns only itself.
/// 3. An observer stops observing as soon as all of its owners are deallocated or removed. Removing the
///    observer's self-ownership leaves its other owners in charge.
/// 4. A class-instance observer is identified by object identity: adding it again adds owners, never a second
///    entry or a second ``ObserverNotice/added`` notice. Closures and structs are never deduplicated.
/// 5. An entry that ends gets ``ObserverNotice/stopped`` exactly once — except a self-owned observer that was
///    itself deallocated.
/// 6. Owner death needs no cooperation: owners are weak references, checked at the moment of every call (and kept
///    alive through it) and swept in bulk by ``sweep()`` and, amortised, after mutations. A call made outside the
///    table — by a lane, in a task — asks with ``withLiveObserver(_:_:)`` first, so no handler runs once the last
///    owner's `deinit` has begun, however long the delivery waited.
/// 7. Delivery is in insertion order. Once `removeObservers(ownedBy:)` returns, the observers it ended receive
///    nothing further and none of their calls is running, even a notification already in progress or a call made
///    through ``withLiveObserver(_:_:)``. An observer added during a notification gets its own added notice but not
///    that notification.
/// 8. Every method may be called from any thread at any time, including from inside a callback. No lock is held
///    while a callback runs.
/// 9. ``observe(_:binding:)`` returns an ``ObservationToken`` for those who prefer a token to an owner.
/// 10. Nothing waits in a `deinit`. Removals back off while the drainer finishes, sleep on a condition while a call
///     runs outside the table, and their `async` forms suspend.
///
/// ## Delivery
///
/// Notices are delivered by calling the `deliver` function given at initialisation, one at a time per table, in
/// the order they were posted: one thread at a time drains the table's queue of notices, so an observer is never
/// called concurrently with itself and sees each poster's notices in that poster's order. A notice posted from
/// inside a callback is queued and delivered after that callback returns, never re-entrantly. When several
/// threads post at once, one of them delivers for all and the others return at once: ``notify(_:)`` never blocks
/// on a slow observer that another thread is serving. (Bounding what a slow observer is sent is `DeliveryKit`'s
/// job; use it for anything slower than a function call.)
///
/// ```swift
/// let table = ObserverTable<any ThermometerObserver, Temperature> { observer, notice in
///     observer.thermometer(notice)
/// }
/// table.add(panel, owner: screen)   // strong until `screen` is gone
/// table.add(logger)                 // self-owned (weak), when ThermometerObserver is a class protocol
/// table.notify(.celsius(21))
/// table.removeObservers(ownedBy: screen)
/// ```
public final class ObserverTable<Observer: Sendable, Event: Sendable>: Sendable {
    /// Calls one observer with one notice.
    public typealias Delivery = @Sendable (Observer, ObserverNotice<Event>) -> Void

    @usableFromInline let deliver: Delivery
    @usableFromInline let state = LockedValue(State())
    /// The ticket of the last job delivered; removals wait on it.
    @usableFromInline let delivered = Watermark()

    /// Makes an empty table that delivers notices with `deliver`.
    ///
    /// `deliver` runs on whichever thread is delivering, never under a lock, never concurrently with itself.
    public init(deliver: @escaping Delivery) {
        self.deliver = deliver
    }

    // MARK: Adding

    /// Adds a self-owned observer: held weakly, observing until it is deallocated or removes itself with
    /// `removeObservers(ownedBy: observer)`.
    ///
    /// `wrap` turns the object into the table's observer type, for example `{ $0 }` when `Observer` is an
    /// existential the object conforms to. It is called for each delivery while the observer is held weakly.
    ///
    /// `binding`, when given, learns the observer's id before any notice can reach it (see ``ObserverBinding``).
    @inlinable
    @discardableResult
    public func add<Object: AnyObject & Sendable>(
        _ observer: Object, binding: ObserverBinding? = nil, as wrap: @escaping @Sendable (Object) -> Observer
    ) -> ObserverID {
        let project: @Sendable (AnyObject) -> Observer? = { wrap(unsafeDowncast($0, to: Object.self)) }
        return ObserverID(
            attach(wrap(observer), object: observer, ownership: .selfOwned(project)) { binding?.bind($0) })
    }

    /// Adds a self-owned observer: held weakly, observing until it is deallocated or removes itself with
    /// `removeObservers(ownedBy: observer)`.
    @inlinable
    @discardableResult
    public func add(_ observer: Observer) -> ObserverID where Observer: AnyObject {
        add(observer, as: { $0 })
    }

    /// Adds an observer owned by `owner`: held strongly, observing until every owner is gone or removed.
    ///
    /// A class-instance observer already in the table gains `owner` (no second entry, no second added notice).
    /// When `owner` is the observer itself this is self-ownership, as with ``add(_:)``.
    @inlinable
    @discardableResult
    public func add(_ observer: Observer, owner: AnyObject) -> ObserverID {
        let object = Self.object(of: observer)
        if let object, object === owner {
            return ObserverID(attach(observer, object: object, ownership: .selfOwned({ $0 as? Observer })))
        }
        return ObserverID(attach(observer, object: object, ownership: .owned(WeakReference(owner))))
    }

    /// Adds an observer owned by `owner` and identified by `identity`: for an observer that wraps a class instance
    /// (a struct holding it, say), so that adding the same instance again adds owners rather than a second entry,
    /// as ``add(_:owner:)`` does for an observer that is itself the instance.
    ///
    /// `identity` should not be `owner`; for self-ownership use `add(_:as:)`.
    ///
    /// `binding`, when given, learns the observer's id before any notice can reach it (see ``ObserverBinding``).
    @inlinable
    @discardableResult
    public func add(
        _ observer: Observer, identity: AnyObject?, owner: AnyObject, binding: ObserverBinding? = nil
    ) -> ObserverID {
        ObserverID(attach(observer, object: identity, ownership: .owned(WeakReference(owner))) { binding?.bind($0) })
    }

    /// Adds an observer owned by the returned token: it observes until the token is cancelled or deinitialized.
    ///
    /// `binding`, when given, learns the observer's id before any notice can reach it (see ``ObserverBinding``).
    @inlinable
    public func observe(_ observer: Observer, binding: ObserverBinding? = nil) -> ObservationToken {
        let token = ObservationToken()
        // Owned by the token's lifeline, not the token: a call keeps its owner alive while it runs, and that must
        // never keep the token alive past its holder (see ``ObservationToken``). An inspector names the token.
        let owner = WeakReference(token.lifeline, standingFor: ObservationToken.self)
        let ownerID = owner.id
        let entryID = attach(observer, object: Self.object(of: observer), ownership: .owned(owner)) {
            binding?.bind($0)
        }
        token.arm { [weak self] in
            self?.release(ownerID: ownerID, fromEntry: entryID)
        }
        return token
    }

    // MARK: Removing

    /// Removes `owner` from every observer it owns; observers left with no owner stop observing.
    ///
    /// Passing an observer removes its self-ownership only: its other owners keep it observing (strongly held).
    ///
    /// When this returns, every observer it ended has received its ``ObserverNotice/stopped`` notice and
    /// receives nothing further — even from a notification in progress on another thread, or a call made through
    /// ``withLiveObserver(_:_:)``, which this call waits out, sleeping on a condition. The exception: called from
    /// inside an observer callback, it does not wait (a thread that is delivering never waits, which is what keeps
    /// waits free of deadlock), so a notice already being delivered by another thread may still finish. Do not call
    /// it while holding a lock or blocking a queue that an observer's callback needs; from Swift concurrency's
    /// threads, prefer the `async` form.
    @inlinable
    public func removeObservers(ownedBy owner: AnyObject?) {
        settle(removing(ownedBy: owner))?.wait()
    }

    /// ``removeObservers(ownedBy:)``, suspending instead of blocking while a notice or call in progress finishes:
    /// the form to use from Swift concurrency's threads.
    @inlinable
    public func removeObservers(ownedBy owner: AnyObject?) async {
        await settle(removing(ownedBy: owner))?.wait()
    }

    /// Removes `owner` under the lock; returns what the caller must finish.
    @inlinable
    func removing(ownedBy owner: AnyObject?) -> Outcome {
        guard let owner else { return Outcome() }
        var graveyard = Graveyard<Observer>()
        return state.withLock { state in
            var outcome = Outcome()
            // Ending entries moves none of the others (they stay, hollow, until `claimDrain`).
            for index in state.entries.indices where !state.entries[index].isEnded {
                var changed = false
                if state.entries[index].isSelfOwned, state.entries[index].object?.refers(to: owner) == true {
                    state.entries[index].isSelfOwned = false
                    changed = true
                }
                if let position = state.entries[index].owners.firstIndex(where: { $0.refers(to: owner) }) {
                    state.entries[index].owners.remove(at: position)
                    changed = true
                }
                if changed { _ = state.settle(at: index, &graveyard, &outcome) }
            }
            state.noteMutation(&graveyard, &outcome)
            state.claimDrain(&outcome)
            outcome.waitTicket = state.lastTicket
            return outcome
        }
    }

    /// Removes the owner with identity `ownerID` (alive or in its `deinit`) from one entry; returns what is left
    /// to wait for, which the caller may skip (a `deinit` never waits).
    @inlinable
    func release(ownerID: ObjectIdentifier, fromEntry entryID: UInt64) -> Settling? {
        var graveyard = Graveyard<Observer>()
        let outcome = state.withLock { state in
            var outcome = Outcome()
            if let index = state.index(of: entryID),
                let position = state.entries[index].owners.firstIndex(where: { $0.id == ownerID })
            {
                state.entries[index].owners.remove(at: position)
                _ = state.settle(at: index, &graveyard, &outcome)
            }
            state.claimDrain(&outcome)
            outcome.waitTicket = state.lastTicket
            return outcome
        }
        return settle(outcome)
    }

    /// Ends every observer whose owners are all gone now, sending their stopped notices, and releases the
    /// strong references that only dead owners justified.
    @inlinable
    public func sweep() {
        var graveyard = Graveyard<Observer>()
        let outcome = state.withLock { state in
            var outcome = Outcome()
            state.sweep(&graveyard, &outcome)
            state.claimDrain(&outcome)
            return outcome
        }
        finish(outcome)
    }

    /// Whether, among up to `limit` entries — those after the ones the last call looked at, wrapping around — an
    /// observer's owners are all gone, so that a sweep would end it. Ends nothing and delivers nothing: for a caller
    /// that sweeps elsewhere (on another task) and wants to know, cheaply and often, whether it is worth it.
    @inlinable
    public func hasEnded(atMost limit: Int) -> Bool {
        var graveyard = Graveyard<Observer>()
        let found = state.withLock { $0.hasEnded(atMost: limit, &graveyard) }
        withExtendedLifetime(graveyard) {}  // released here, outside the lock
        return found
    }

    /// Ends the observers whose owners are all gone among up to `limit` entries — the entries after those the
    /// last bounded sweep looked at, wrapping around — so that calling it often costs a bounded time per call and
    /// still reaches every entry within `count / limit` calls. With `limit` entries or fewer, the same as
    /// ``sweep()``. Returns how many entries the table holds that this call did not look at — zero when it looked at
    /// every one — so that a caller can tell how many more calls reach every entry.
    @inlinable
    @discardableResult
    public func sweep(atMost limit: Int) -> Int {
        var graveyard = Graveyard<Observer>()
        let (outcome, unvisited) = state.withLock { state in
            var outcome = Outcome()
            let unvisited = state.sweep(atMost: limit, &graveyard, &outcome)
            state.claimDrain(&outcome)
            return (outcome, unvisited)
        }
        finish(outcome)
        return unvisited
    }

    // MARK: Notifying

    /// Delivers `event` to every observer in the table now, in insertion order.
    ///
    /// Each observer's owners are checked just before its delivery; observers removed or left without owners
    /// meanwhile are skipped. Returns after delivering, or at once if another thread is delivering (that thread
    /// delivers this event next, in order).
    @inlinable
    public func notify(_ event: Event) {
        let outcome = state.withLock { state in
            var outcome = Outcome()
            guard state.liveCount > 0 else { return outcome }
            state.enqueue(.event(event, state.entries), &outcome)
            state.claimDrain(&outcome)
            return outcome
        }
        if outcome.mustDrain { drain() }
    }

    // MARK: Inspecting

    /// The number of observers whose owners are alive right now.
    @inlinable
    public var observerCount: Int {
        let snapshot = state.withLock { $0.entries }
        return withExtendedLifetime(snapshot) {
            var count = 0
            for entry in snapshot where entry.life.isOpen && entry.target() != nil {
                count += 1
            }
            state.withLock { _ in }  // released after a lock: see `drain()`
            return count
        }
    }

    /// Whether any observer's owners are alive right now.
    @inlinable
    public var hasObservers: Bool {
        let snapshot = state.withLock { $0.entries }
        return withExtendedLifetime(snapshot) {
            let found = snapshot.contains { $0.life.isOpen && $0.target() != nil }
            state.withLock { _ in }  // released after a lock: see `drain()`
            return found
        }
    }
}

extension ObserverTable {
    /// How an observer is being added.
    @usableFromInline
    enum Ownership {
        case selfOwned(@Sendable (AnyObject) -> Observer?)
        case owned(WeakReference)
    }

    /// The observer's object when it is a class instance (its identity), or nil for closures and structs.
    @inlinable
    static func object(of observer: Observer) -> AnyObject? {
        guard type(of: observer as Any) is AnyClass else { return nil }
        return observer as AnyObject
    }

    /// Adds an entry, or ownership to the entry that already holds `object`; returns the entry's id.
    ///
    /// `bind` is told the entry's id under the table's lock, before any notice can reach the observer: an observer
    /// that calls out of the table later (a lane) learns whom to ask whether it may. It must only store the id.
    @inlinable
    @discardableResult
    func attach(
        _ observer: Observer, object: AnyObject?, ownership: Ownership, bind: (ObserverID) -> Void = { _ in }
    ) -> UInt64 {
        var graveyard = Graveyard<Observer>()
        let (entryID, outcome) = state.withLock { state in
            var outcome = Outcome()
            if let object, let id = state.entryByObject[ObjectIdentifier(object)], let index = state.index(of: id) {
                if state.entries[index].object?.refers(to: object) == true {
                    switch ownership {
                    case .selfOwned(let project):
                        state.entries[index].isSelfOwned = true
                        if state.entries[index].project == nil { state.entries[index].project = project }
                    case .owned(let owner):
                        if !state.entries[index].owners.contains(where: { $0.id == owner.id && $0.object != nil }) {
                            state.entries[index].owners.append(owner)
                        }
                        if state.entries[index].strong == nil { state.entries[index].strong = StrongObserver(observer) }
                    }
                    bind(ObserverID(id))
                    state.noteMutation(&graveyard, &outcome)
                    state.claimDrain(&outcome)
                    return (id, outcome)
                }
                // The mapped entry's object died and its address was reused by `object`: settle the old entry.
                _ = state.settle(at: index, &graveyard, &outcome)
            }
            let entry: ObserverEntry<Observer>
            switch ownership {
            case .selfOwned(let project):
                entry = ObserverEntry(
                    id: state.nextEntryID, strong: nil, object: object.map(WeakReference.init),
                    project: project, isSelfOwned: true, owners: [])
            case .owned(let owner):
                entry = ObserverEntry(
                    id: state.nextEntryID, strong: StrongObserver(observer), object: object.map(WeakReference.init),
                    project: nil, isSelfOwned: false, owners: [owner])
            }
            state.nextEntryID += 1
            bind(ObserverID(entry.id))
            state.entries.append(entry)
            if let object { state.entryByObject[ObjectIdentifier(object)] = entry.id }
            state.enqueue(.added(entry), &outcome)
            state.noteMutation(&graveyard, &outcome)
            state.claimDrain(&outcome)
            return (entry.id, outcome)
        }
        finish(outcome)
        return entryID
    }
}
