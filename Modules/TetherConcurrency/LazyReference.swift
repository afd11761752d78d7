package import Synchronization

/// A reference made once, on first use, by whichever thread gets there first: the standard library's
/// `AtomicLazyReference`, written again with inlinable atomics.
///
/// The standard library's `load()` and `storeIfNil(_:)` are compiled into the Synchronization library, which
/// ThreadSanitizer does not instrument: it cannot see their acquire and release, so the first read of the object's
/// fields on another thread is reported as a race with its initializer (a resource's observer table, made by
/// `addObserver` while a flush asks `hasObservers`, is one). These atomics are inlined into Tether's code and seen.
package struct LazyReference<Instance: AnyObject & Sendable>: ~Copyable, @unchecked Sendable {
    /// The instance's address, retained once, or 0. An address rather than an `Unmanaged<Instance>?`: an atomic of a
    /// concrete type needs no generic metadata, so even a call the optimizer leaves unspecialized costs a load, not
    /// a metadata lookup.
    @usableFromInline let storage: Atomic<UInt>

    /// Nothing stored yet.
    @inlinable
    package init() {
        storage = Atomic(0)
    }

    @inlinable
    deinit {
        if let instance = Self.instance(at: storage.load(ordering: .acquiring)) {
            Unmanaged.passUnretained(instance).release()
        }
    }

    /// The instance stored, if any (an acquiring load: its initialization happened before).
    @inlinable
    package func load() -> Instance? {
        Self.instance(at: storage.load(ordering: .acquiring))
    }

    /// Stores `desired` if nothing is stored yet, and returns what is stored then: `desired`, or the instance
    /// another thread stored first (`desired` is then released).
    @inlinable
    package func storeIfNil(_ desired: consuming Instance) -> Instance {
        let new = Unmanaged.passRetained(desired)
        let address = UInt(bitPattern: new.toOpaque())
        let (exchanged, current) = storage.compareExchange(
            expected: 0, desired: address, ordering: .acquiringAndReleasing)
        guard !exchanged, let stored = Self.instance(at: current) else { return new.takeUnretainedValue() }
        new.release()
        return stored
    }

    @inlinable
    static func instance(at address: UInt) -> Instance? {
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
        return Unmanaged<Instance>.fromOpaque(pointer).takeUnretainedValue()
    }
}
