package import Synchronization

/// A reference made once, on first use, by whichever thread gets there first: the standard library's
/// `AtomicLazyReference`, written again with inlinable atomics.
///
/// The standard library's `load()` and `storeIfNil(_:)` are compiled into the Synchronization library, which
/// ThreadSanitizer does not instrument: it cannot see their acquire and release, so the first read of the object's
/// fields on another thread is reported as a race with its initializer (a resource's observer table, made by
/// `addObserver` while a flush asks `hasObservers`, is one). These atomics are inlined into Tether's code and seen.
package struct LazyReference<Instance: AnyObject & Sendable>: ~Copyable, @unchecked Sendable {
    @usableFromInline let storage: Atomic<Unmanaged<Instance>?>

    /// Nothing stored yet.
    @inlinable
    package init() {
        storage = Atomic(nil)
    }

    @inlinable
    deinit {
        storage.load(ordering: .acquiring)?.release()
    }

    /// The instance stored, if any (an acquiring load: its initialization happened before).
    @inlinable
    package func load() -> Instance? {
        storage.load(ordering: .acquiring)?.takeUnretainedValue()
    }

    /// Stores `desired` if nothing is stored yet, and returns what is stored then: `desired`, or the instance
    /// another thread stored first (`desired` is then released).
    @inlinable
    package func storeIfNil(_ desired: consuming Instance) -> Instance {
        let new = Unmanaged.passRetained(desired)
        let (exchanged, current) = storage.compareExchange(
            expected: nil, desired: new, ordering: .acquiringAndReleasing)
        guard !exchanged, let current else { return new.takeUnretainedValue() }
        new.release()
        return current.takeUnretainedValue()
    }
}
