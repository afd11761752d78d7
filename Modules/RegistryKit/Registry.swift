public import TetherConcurrency

/// Canonical instances by key: at most one live instance per key, kept until a flush, and then only if in use
/// or referenced from outside.
///
/// The rules (Siesta's, for its resources):
/// - ``instance(for:create:)`` returns the existing instance for a key if there is one alive, and otherwise makes
///   one — exactly one, also when many threads ask for the same key at once.
/// - Instances are held strongly until a flush. A flush demotes every instance not in use to a weak reference:
///   one still referenced from outside survives and stays canonical (the same instance is returned afterwards,
///   and held strongly again); the rest are gone. An instance in use (`isInUse`, for example "has observers") is
///   never demoted.
/// - Flushes happen only on ``flushUnused()`` — called by a `MemoryPressureMonitor` under memory pressure, by
///   you, or by a wipe — and when inserting would exceed the count limit. Looking things up never evicts.
///
/// ```swift
/// let resources = Registry<String, Resource>(isInUse: { $0.hasObservers })
/// let resource = resources.instance(for: url) { Resource(url: url) }
/// ```
public final class Registry<Key: Hashable & Sendable, Value: AnyObject & Sendable>: Sendable {
    /// Limits and defaults.
    public struct Configuration: Sendable {
        /// How many instances the registry holds before inserting a new one flushes unused ones first. A soft limit:
        /// instances in use or referenced from outside stay, however many there are. Default 2048, Siesta's.
        public var countLimit: Int

        /// Makes a configuration; `countLimit` must be positive (a non-positive one is treated as 1).
        public init(countLimit: Int = 2048) {
            self.countLimit = max(1, countLimit)
        }
    }

    /// How an instance is held.
    @usableFromInline
    enum Slot: Sendable {
        case strong(Value)
        case weak(WeakValue<Value>)
    }

    /// The registry's state, behind its lock.
    @usableFromInline
    struct State: Sendable {
        @usableFromInline var slots: [Key: Slot] = [:]
        /// False once ``stopRetaining()`` was called: every instance is then held weakly.
        @usableFromInline var isRetaining = true
        /// The count limit now (see ``Registry/countLimit``).
        @usableFromInline var countLimit: Int
        /// Other names for keys (see ``Registry/addAlias(_:for:)``).
        @usableFromInline var aliases: [Key: Key] = [:]

        @inlinable
        init(countLimit: Int) {
            self.countLimit = countLimit
        }
    }

    @usableFromInline let isInUse: @Sendable (Value) -> Bool
    @usableFromInline let state: LockedValue<State>

    /// Makes an empty registry.
    ///
    /// - Parameters:
    ///   - configuration: The count limit.
    ///   - isInUse: Whether an instance must not be demoted by a flush (for resources: "has observers"). Runs
    ///     under the registry's lock: keep it quick, and never call the registry from it.
    public init(
        configuration: Configuration = Configuration(),
        isInUse: @escaping @Sendable (Value) -> Bool = { _ in false }
    ) {
        self.isInUse = isInUse
        state = LockedValue(State(countLimit: configuration.countLimit))
    }

    /// How many instances the registry holds before inserting a new one flushes unused ones first (see
    /// ``Configuration/countLimit``). Settable at any time: lowered below the number of live instances, it flushes
    /// at once; a non-positive value is treated as 1.
    public var countLimit: Int {
        get { state.withLock { $0.countLimit } }
        set {
            var released: [Value] = []
            state.withLock { state in
                state.countLimit = max(1, newValue)
                guard state.slots.count > state.countLimit else { return }
                forgetGone(&state.slots, into: &released)
                if state.slots.count > state.countLimit { flush(&state.slots, into: &released) }
            }
            _ = consume released  // demoted instances are released here, outside the lock
        }
    }

    /// The canonical instance for `key`: the live one, or a new one from `create`.
    ///
    /// `create` runs under the registry's lock, so that no key ever gets two instances: it must not call the
    /// registry. When inserting would exceed the count limit, unused instances are flushed first.
    @inlinable
    public func instance(for key: Key, create: () -> Value) -> Value {
        // The common case, an instance held strongly, in one lock and one hash.
        if let value = state.withLock({ state -> Value? in
            if case .strong(let value) = state.slots[key] { return value }
            return nil
        }) {
            return value
        }
        return insertInstance(for: key, create: create)
    }

    /// The instance held strongly for the key that `alias` names, if any: one lock and two hashes, for a second
    /// spelling of a key that is costly to turn into the key (an absolute URL, for a registry keyed by path). Nil
    /// when there is no such alias or the instance is not held strongly: then look it up by its key, which
    /// revives or makes it, and add the alias again.
    @inlinable
    public func instance(forAlias alias: Key) -> Value? {
        state.withLock { state -> Value? in
            guard let key = state.aliases[alias], case .strong(let value) = state.slots[key] else { return nil }
            return value
        }
    }

    /// Makes `alias` another name for `key`, for ``instance(forAlias:)``. Aliases of keys that have gone are
    /// forgotten once aliases outnumber the entries twice over.
    public func addAlias(_ alias: Key, for key: Key) {
        state.withLock { state in
            state.aliases[alias] = key
            if state.aliases.count > 2 * state.slots.count + 64 {
                state.aliases = state.aliases.filter { state.slots[$0.value] != nil }
            }
        }
    }

    /// The rest of ``instance(for:create:)``: revives a weakly held instance, or makes one.
    @usableFromInline
    func insertInstance(for key: Key, create: () -> Value) -> Value {
        var released: [Value] = []
        let value = state.withLock { state -> Value in
            switch state.slots[key] {
            case .strong(let value):
                return value
            case .weak(let reference):
                if let value = reference.value {
                    if state.isRetaining { state.slots[key] = .strong(value) }  // canonical again, and held again
                    released.append(value)  // the load's reference, dropped outside the lock
                    return value
                }
            case nil:
                break
            }
            if state.slots.count >= state.countLimit {
                // Entries whose instance is gone — those the last flush let go of, once their last reference went —
                // count for nothing: forget them first, and flush only if the live ones still reach the limit.
                forgetGone(&state.slots, into: &released)
                if state.slots.count >= state.countLimit {
                    flush(&state.slots, into: &released)
                }
            }
            let value = create()
            state.slots[key] = state.isRetaining ? .strong(value) : .weak(WeakValue(value))
            return value
        }
        _ = consume released  // demoted instances are released here, outside the lock
        return value
    }

    /// Stops holding instances strongly, in use or not: every instance is demoted to a weak reference now, and
    /// instances made from now on are held weakly. Instances referenced from outside stay canonical. For an owner
    /// that is going away (a dropped `Service`), so that nothing outlives it only because the registry held it.
    public func stopRetaining() {
        var released: [Value] = []
        state.withLock { state in
            state.isRetaining = false
            for (key, slot) in state.slots {
                if case .strong(let value) = slot {
                    state.slots[key] = .weak(WeakValue(value))
                    released.append(value)
                }
            }
        }
        _ = consume released
    }

    /// Holds instances strongly again (the default), from their next lookup.
    public func resumeRetaining() {
        state.withLock { $0.isRetaining = true }
    }

    /// The live instance for `key`, if there is one; never creates.
    public func existingInstance(for key: Key) -> Value? {
        state.withLock { state in
            switch state.slots[key] {
            case .strong(let value): return value
            case .weak(let reference): return reference.value
            case nil: return nil
            }
        }
    }

    /// Every live instance, in no particular order (held strongly by the returned array).
    public func allInstances() -> [Value] {
        state.withLock { state in
            state.slots.values.compactMap { slot in
                switch slot {
                case .strong(let value): value
                case .weak(let reference): reference.value
                }
            }
        }
    }

    /// Demotes every instance not in use to a weak reference and forgets those that are gone; returns how many
    /// instances the registry stopped holding strongly.
    @discardableResult
    public func flushUnused() -> Int {
        var released: [Value] = []
        let demoted = state.withLock { flush(&$0.slots, into: &released) }
        _ = consume released
        return demoted
    }

    /// How many instances are alive and known to the registry (held strongly, or weakly and still referenced).
    public var count: Int {
        var loaded: [Value] = []
        let count = state.withLock { state in
            state.slots.values.count { slot in
                switch slot {
                case .strong:
                    return true
                case .weak(let reference):
                    guard let value = reference.value else { return false }
                    loaded.append(value)
                    return true
                }
            }
        }
        _ = consume loaded  // released outside the lock
        return count
    }

    /// How many instances the registry holds strongly.
    public var strongCount: Int {
        state.withLock { $0.slots.values.count { if case .strong = $0 { true } else { false } } }
    }

    /// Under the lock: removes the weakly held entries whose instance is gone. The instances it loads to look go into
    /// `released`, dropped by the caller outside the lock.
    @usableFromInline
    func forgetGone(_ slots: inout [Key: Slot], into released: inout [Value]) {
        for (key, slot) in slots {
            guard case .weak(let reference) = slot else { continue }
            if let value = reference.value { released.append(value) } else { slots[key] = nil }
        }
    }

    /// Under the lock: demotes unused instances and removes entries whose instance is gone; returns how many were
    /// demoted. Every strong reference it lets go of, or loads from a weak one, goes into `released`, dropped by
    /// the caller outside the lock: a load may briefly hold the last reference while another thread lets go, and
    /// no `deinit` may run under the lock.
    @usableFromInline
    @discardableResult
    func flush(_ slots: inout [Key: Slot], into released: inout [Value]) -> Int {
        var demoted = 0
        for (key, slot) in slots {
            switch slot {
            case .strong(let value):
                guard !isInUse(value) else { continue }
                slots[key] = .weak(WeakValue(value))
                released.append(value)
                demoted += 1
            case .weak(let reference):
                if let value = reference.value {
                    released.append(value)
                } else {
                    slots[key] = nil
                }
            }
        }
        return demoted
    }
}

/// A weak reference to a registry's instance.
@usableFromInline
final class WeakValue<Value: AnyObject & Sendable>: Sendable {
    @usableFromInline weak let value: Value?

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }
}
