import TetherConcurrency

/// Tracks, per thread (and per task, for asynchronous calls), whether the thread is delivering notices for some
/// ``ObserverTable``.
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

    /// Set for the task running an asynchronous call made through a table (a handler that suspends may resume
    /// on any thread, so a thread mark cannot follow it).
    @TaskLocal package static var isDeliveringAsynchronously = false

    /// True when the current thread is running inside an observer callback of any table, or the current task
    /// inside an asynchronous one.
    @usableFromInline
    package static var isDelivering: Bool { depth > 0 || isDeliveringAsynchronously }

    /// Runs `body` marked as delivering on the current thread.
    @usableFromInline
    package static func delivering<R>(_ body: () throws -> R) rethrows -> R {
        let outer = depth
        slot.value = UnsafeMutableRawPointer(bitPattern: outer + 1)
        defer { slot.value = UnsafeMutableRawPointer(bitPattern: outer) }
        return try body()
    }

    /// Runs `body` marked as delivering for the current task, across its suspensions.
    @usableFromInline
    package static func deliveringAsynchronously<R>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
    ) async rethrows -> R {
        try await $isDeliveringAsynchronously.withValue(true) { try await body() }
    }
}
