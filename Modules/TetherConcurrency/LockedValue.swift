#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`: Tether's one lock box.
///
/// Why not `Synchronization.Mutex`: on Linux it locks with raw futex system calls that ThreadSanitizer cannot
/// see, so every access it guards is reported as a race (a two-thread counter is enough to show it). Tether's
/// concurrency tests must run under `--sanitize=thread` with zero reports, and TSan understands pthread mutexes.
/// The box is tiny on purpose; it is the only kind of `@unchecked Sendable` Tether allows besides weak and
/// retain-only references.
///
/// `withLock` is inlinable so that generic callers are specialised in their own module; the pthread calls stay
/// behind two small functions, so no client needs the C library's module.
@usableFromInline
package final class LockedValue<Value> {
    @usableFromInline let mutex: PThreadMutex
    // The mutex guarantees exclusive access, so the runtime's dynamic exclusivity check is redundant here.
    @exclusivity(unchecked) @usableFromInline var value: Value

    @inlinable
    package init(_ value: Value) {
        self.value = value
        self.mutex = PThreadMutex()
    }

    /// Runs `body` with exclusive access to the value. Never call user code from `body`.
    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&value)
    }
}

extension LockedValue: @unchecked Sendable where Value: Sendable {}

/// The mutex itself, allocated once and never moved (a `pthread_mutex_t` must not be copied).
@usableFromInline
package final class PThreadMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    @usableFromInline
    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @usableFromInline
    package func lock() { pthread_mutex_lock(mutex) }

    @usableFromInline
    package func unlock() { pthread_mutex_unlock(mutex) }

    /// The mutex itself, for a condition wait (see ``ConditionLock``).
    func withUnsafeMutex<Result>(_ body: (UnsafeMutablePointer<pthread_mutex_t>) -> Result) -> Result {
        body(mutex)
    }
}
