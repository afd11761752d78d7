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
package final class LockedValue<Value> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
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

    /// Runs `body` with exclusive access to the value. Never call user code from `body`.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

extension LockedValue: @unchecked Sendable where Value: Sendable {}
