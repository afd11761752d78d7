import TetherConcurrency

/// What an inspector shows of a registry's instances: which are held, which are in use, and which would survive a
/// flush only because something else references them.
extension Registry {
    /// One live instance and how it is held.
    package struct Inspection: Sendable {
        /// The instance's key.
        package let key: Key
        /// The instance (held strongly by the inspection).
        package let value: Value
        /// Whether the registry holds it strongly (not yet flushed, or revived since).
        package let isHeldStrongly: Bool
        /// Whether it is in use (for resources: observed): no flush demotes it.
        package let isInUse: Bool
        /// Whether something other than the registry references it: it survives a flush even when not in use.
        package let isReferencedElsewhere: Bool

        /// Whether the next flush would deallocate it: held only by the registry and not in use.
        package var wouldBeReleasedByFlush: Bool { !isInUse && !isReferencedElsewhere }
    }

    /// Every live instance with how it is held, in no particular order. On demand, for an inspector: it costs one
    /// pass over the registry under its lock, and nothing is recorded for it otherwise.
    package func inspect() -> [Inspection] {
        var released: [Value] = []
        let inspections = state.withLock { state -> [Inspection] in
            var inspections: [Inspection] = []
            for key in Array(state.slots.keys) {
                switch state.slots[key] {
                case .weak(let reference)?:
                    // Flushed and still alive: only references from outside keep it.
                    guard let value = reference.value else { continue }
                    released.append(value)
                    inspections.append(
                        Inspection(
                            key: key, value: value, isHeldStrongly: false, isInUse: isInUse(value),
                            isReferencedElsewhere: true))
                case .strong?:
                    let elsewhere = Self.isReferencedElsewhere(&state.slots, key)
                    guard case .strong(let value)? = state.slots[key] else { continue }
                    inspections.append(
                        Inspection(
                            key: key, value: value, isHeldStrongly: true, isInUse: isInUse(value),
                            isReferencedElsewhere: elsewhere))
                case nil:
                    continue
                }
            }
            return inspections
        }
        _ = consume released  // released outside the lock
        return inspections
    }

    /// Under the lock: whether anything but the registry's slot references the instance held strongly at `key`.
    /// Takes the instance out of its slot, so that the slot's reference is the one being checked, and puts it back.
    private static func isReferencedElsewhere(_ slots: inout [Key: Slot], _ key: Key) -> Bool {
        guard var value = slots.removeValue(forKey: key)?.strongValue else { return false }
        defer { slots[key] = .strong(value) }
        return !isKnownUniquelyReferenced(&value)
    }
}

extension Registry.Slot {
    /// The instance, when held strongly.
    var strongValue: Value? {
        if case .strong(let value) = self { return value }
        return nil
    }
}
