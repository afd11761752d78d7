import ConcurrencyHelpers

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
/// - Flushes happen only on ``flushUnused()`` — called by a ``MemoryPressureMonitor`` under memory pressure, by
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
    enum Slot: Sendable {
        case strong(Value)
        case weak(WeakValue<Value>)
    }

    let configuration: Configuration
    let isInUse: @Sendable (Value) -> Bool
    let slots = LockedValue<[Key: Slot]>([:])

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
        self.configuration = configuration
        self.isInUse = isInUse
    }

    /// The canonical instance for `key`: the live one, or a new one from `create`.
    ///
    /// `create` runs under the registry's lock, so that no key ever gets two instances: it must not call the
    /// registry. When inserting would exceed the count limit, unused instances are flushed first.
    public func instance(for key: Key, create: () -> Value) -> Value {
        var released: [Value] = []
        let value = slots.withLock { slots -> Value in
            switch slots[key] {
            case .strong(let value):
                return value
            case .weak(let reference):
                if let value = reference.value {
                    slots[key] = .strong(value)  // canonical again, and held again
                    return value
                }
            case nil:
                break
            }
            if slots.count >= configuration.countLimit {
                flush(&slots, into: &released)
            }
            let value = create()
            slots[key] = .strong(value)
            return value
        }
        _ = consume released  // demoted instances are released here, outside the lock
        return value
    }

    /// The live instance for `key`, if there is one; never creates.
    public func existingInstance(for key: Key) -> Value? {
        slots.withLock { slots in
            switch slots[key] {
            case .strong(let value): return value
            case .weak(let reference): return reference.value
            case nil: return nil
            }
        }
    }

    /// Every live instance, in no particular order (held strongly by the returned array).
    public func allInstances() -> [Value] {
        slots.withLock { slots in
            slots.values.compactMap { slot in
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
        let demoted = slots.withLock { flush(&$0, into: &released) }
        _ = consume released
        return demoted
    }

    /// How many instances are alive and known to the registry (held strongly, or weakly and still referenced).
    public var count: Int {
        var loaded: [Value] = []
        let count = slots.withLock { slots in
            slots.values.count { slot in
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
        slots.withLock { $0.values.count { if case .strong = $0 { true } else { false } } }
    }

    /// Under the lock: demotes unused instances and removes entries whose instance is gone; returns how many were
    /// demoted. Every strong reference it lets go of, or loads from a weak one, goes into `released`, dropped by
    /// the caller outside the lock: a load may briefly hold the last reference while another thread lets go, and
    /// no `deinit` may run under the lock.
    @discardableResult
    private func flush(_ slots: inout [Key: Slot], into released: inout [Value]) -> Int {
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
final class WeakValue<Value: AnyObject & Sendable>: Sendable {
    weak let value: Value?

    init(_ value: Value) {
        self.value = value
    }
}
