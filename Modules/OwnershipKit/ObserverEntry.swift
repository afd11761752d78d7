public import TetherConcurrency

/// Strong references set aside while the table's lock is held, released once it is not.
///
/// Loading a weak reference creates a strong one; if another thread drops the object's last other reference
/// meanwhile, releasing ours would run its `deinit` — user code — under the lock. So nothing is released there.
@usableFromInline
struct Graveyard<Observer: Sendable>: Sendable {
    @usableFromInline var objects: [Retained] = []
    @usableFromInline var observers: [Observer] = []

    @inlinable
    init() {}

    @inlinable
    mutating func keep(_ object: AnyObject) { objects.append(Retained(object: object)) }

    @inlinable
    mutating func keep(_ observer: Observer) { observers.append(observer) }

    @inlinable
    mutating func keep(_ strong: StrongObserver<Observer>) { objects.append(Retained(object: strong)) }
}

/// An observer held strongly. A class, so that a delivery reads the observer in place: copying an opaque
/// existential goes through value witnesses and costs several times a retain.
@usableFromInline
final class StrongObserver<Observer: Sendable>: Sendable {
    @usableFromInline let observer: Observer

    @inlinable
    init(_ observer: Observer) { self.observer = observer }
}

/// A strong reference kept only to postpone its release; never dereferenced, so sharing it is harmless.
@usableFromInline
struct Retained: @unchecked Sendable {
    @usableFromInline let object: AnyObject

    @inlinable
    init(object: AnyObject) { self.object = object }
}

/// One observer's registration: the observer, how it is held, and who owns it.
///
/// Invariant between settlements: `strong` is non-nil exactly when `owners` is non-empty (Siesta's rule: held
/// strongly while it has an owner other than itself).
@usableFromInline
struct ObserverEntry<Observer: Sendable>: Sendable {
    /// Entries are ordered by id: insertion order.
    @usableFromInline let id: UInt64
    /// Whether the entry still observes, and the calls running outside the table (lanes, tasks). Shared by the
    /// entry and every snapshot that holds it, so a notification in progress sees a removal the moment it happens.
    @usableFromInline let life: CallGate
    /// The observer, held strongly while an external owner lives.
    @usableFromInline var strong: StrongObserver<Observer>?
    /// The observer's object, weakly, when the observer is a class instance: its identity and its self-reference.
    @usableFromInline let object: WeakReference?
    /// Recovers the observer from its object while it is held only weakly (set once it is self-owned).
    @usableFromInline var project: (@Sendable (AnyObject) -> Observer?)?
    /// Whether the observer owns itself.
    @usableFromInline var isSelfOwned: Bool
    /// External owners, weakly.
    @usableFromInline var owners: [WeakReference]
    /// Ended and hollow: kept in the table's entries until the table drops ended entries together, so that ending
    /// one moves none of the others (see ``ObserverTable/State/end(at:last:_:_:)``).
    @usableFromInline var isEnded = false

    @inlinable
    init(
        id: UInt64, strong: StrongObserver<Observer>?, object: WeakReference?,
        project: (@Sendable (AnyObject) -> Observer?)?,
        isSelfOwned: Bool, owners: [WeakReference]
    ) {
        self.id = id
        self.life = CallGate()
        self.strong = strong
        self.object = object
        self.project = project
        self.isSelfOwned = isSelfOwned
        self.owners = owners
    }

    /// Marks the entry ended and lets go of what it holds: `graveyard` keeps the observer, released outside the lock.
    @inlinable
    mutating func hollow(_ graveyard: inout Graveyard<Observer>) {
        isEnded = true
        if let strong = strong.take() { graveyard.keep(strong) }
        project = nil
        isSelfOwned = false
        owners = []
    }

    /// How this entry stands after its dead owners have been dropped.
    @usableFromInline
    enum Standing {
        /// Still observing.
        case observing
        /// Ended; `last` is the observer to send `stopped` to, or nil when it was itself deallocated.
        case ended(last: Observer?)
    }

    /// An external owner that is alive right now (retained by the result), or nil when none is.
    @inlinable
    func liveOwner() -> AnyObject? {
        for owner in owners {
            if let alive = owner.object { return alive }
        }
        return nil
    }

    /// An owner alive right now — an external one, else the observer's own object when it owns itself — retained by
    /// the result, with the entry's weak reference to it; nil when none is. Loads weak references: under the table's
    /// lock, only the returned reference may be created, and the caller releases it outside.
    @inlinable
    func anyLiveOwnerAndReference() -> (alive: AnyObject, reference: WeakReference)? {
        for owner in owners {
            if let alive = owner.object { return (alive, owner) }
        }
        if isSelfOwned, let object, let alive = object.object { return (alive, object) }
        return nil
    }

    /// The observer to deliver to right now, with an object to keep alive for the delivery's duration
    /// (a live owner, or the observer's own object), or nil when this record shows no owner alive.
    ///
    /// Runs on the delivering thread, outside the lock: every strong reference it creates is released there.
    @inlinable
    func target() -> (observer: Observer, keepAlive: AnyObject)? {
        if let strong {
            for owner in owners {
                if let alive = owner.object { return (strong.observer, alive) }
            }
        }
        if isSelfOwned, let object, let project, let alive = object.object, let observer = project(alive) {
            return (observer, alive)
        }
        return nil
    }

    /// Whether ``settle(_:)`` would end the entry now: no owner alive, and not a self-owned observer that is.
    /// Changes nothing; what it loads alive goes to `graveyard`, released after the table's lock.
    @inlinable
    func wouldEnd(_ graveyard: inout Graveyard<Observer>) -> Bool {
        for owner in owners {
            if let alive = owner.object {
                graveyard.keep(alive)
                return false
            }
        }
        if isSelfOwned, let alive = object?.object {
            graveyard.keep(alive)
            return false
        }
        return true
    }

    /// Drops dead owners and applies the ownership rules: with no external owner left the observer is held
    /// weakly if it owns itself and is alive, and the entry ends otherwise. Runs under the table's lock.
    @inlinable
    mutating func settle(_ graveyard: inout Graveyard<Observer>) -> Standing {
        if !owners.isEmpty {
            owners.removeAll { owner in
                guard let alive = owner.object else { return true }
                graveyard.keep(alive)
                return false
            }
            if !owners.isEmpty { return .observing }
        }
        if isSelfOwned, let alive = object?.object {
            graveyard.keep(alive)
            if let dropped = strong.take() { graveyard.keep(dropped) }
            return .observing
        }
        if let last = strong.take() { return .ended(last: last.observer) }
        // Weakly held and no longer self-owned: explicitly removed while alive, or deallocated.
        if let object, let project, let alive = object.object {
            graveyard.keep(alive)
            return .ended(last: project(alive))
        }
        return .ended(last: nil)
    }
}
