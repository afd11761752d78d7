import TetherConcurrency

/// Values made once per type. A key path to a property of a generic class is built at run time on each use — the
/// type is demangled, a few microseconds — which was most of a `ResourceModel`'s cost per event; its key paths are
/// made once per `Content` type, here.
enum KeyPathCache {
    private static let made = LockedValue<[ObjectIdentifier: any Sendable]>([:])

    /// The value `make` builds for `type`, built the first time only.
    static func value<Value: Sendable>(for type: Any.Type, _ make: () -> Value) -> Value {
        let key = ObjectIdentifier(type)
        if let value = made.withLock({ $0[key] }) as? Value { return value }
        let value = make()
        made.withLock { $0[key] = value }
        return value
    }
}
