import TetherConcurrency

/// Values made once per key and kept for the process: the tokens of a query text (``QueryParser/tokenCache``) and the
/// compiled query of a `find` with its arguments, sort and slice (``PendingQuery/compiledCache``). Observing, running
/// or changing a `find` compiles it each time, and an app observes the same few queries over and over (a row per
/// item, often with the same `$args`); a query compiled before is shared, not made again — by every observer of it,
/// which then hold one copy of it, not one each. Failures are not kept (their error is made again).
///
/// Bounded: once ``capacity`` keys are kept, the next new one empties the cache first — an app whose queries vary
/// without end pays the work of making them, never memory.
final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// How many keys are kept at most.
    let capacity: Int
    private let values = LockedValue<[Key: Value]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The value kept for `key`, or the one `make` makes now, which is kept unless it throws.
    func value<Failure: Error>(for key: Key, make: () throws(Failure) -> Value) throws(Failure) -> Value {
        if let kept = values.withLock({ $0[key] }) { return kept }
        let made = try make()
        let emptied = values.withLock { kept -> [Key: Value]? in
            var emptied: [Key: Value]?
            if kept.count >= capacity {
                emptied = kept
                kept = Dictionary(minimumCapacity: capacity)
            }
            kept[key] = made
            return emptied
        }
        _ = consume emptied  // released here, outside the lock
        return made
    }

    /// Whether a value is kept for `key`.
    func isKept(_ key: Key) -> Bool {
        values.withLock { $0[key] != nil }
    }

    /// How many keys are kept.
    var count: Int {
        values.withLock { $0.count }
    }
}
