import TetherConcurrency

/// Tracks, per thread, whether the thread is delivering notices for some ``ObserverTable``.
///
/// A thread that is delivering never waits for another table's delivery to finish; that one rule is what makes
/// waits between tables free of cycles (see ``ObserverTable/removeObservers(ownedBy:)``).
@usableFromInline
package enum DeliveryContext {
    static let slot = ThreadLocalSlot()

    /// How many deliveries this thread is nested in (0 outside any).
    @usableFromInline
    package static var depth: Int {
        Int(bitPattern: slot.value)
    }

    /// True when the current thread is running inside an observer callback of any table.
    @usableFromInline
    package static var isDelivering: Bool { depth > 0 }

    /// Runs `body` marked as delivering on the current thread.
    @usableFromInline
    package static func delivering<R>(_ body: () throws -> R) rethrows -> R {
        let outer = depth
        slot.value = UnsafeMutableRawPointer(bitPattern: outer + 1)
        defer { slot.value = UnsafeMutableRawPointer(bitPattern: outer) }
        return try body()
    }
}
