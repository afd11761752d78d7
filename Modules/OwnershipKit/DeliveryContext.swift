#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tracks, per thread, whether the thread is delivering notices for some ``ObserverTable``.
///
/// A thread that is delivering never waits for another table's delivery to finish; that one rule is what makes
/// waits between tables free of cycles (see ``ObserverTable/removeObservers(ownedBy:)``).
@usableFromInline
package enum DeliveryContext {
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed with \(status): the process is out of thread-local keys")
        return key
    }()

    /// How many deliveries this thread is nested in (0 outside any).
    @usableFromInline
    package static var depth: Int {
        Int(bitPattern: pthread_getspecific(key))
    }

    /// True when the current thread is running inside an observer callback of any table.
    @usableFromInline
    package static var isDelivering: Bool { depth > 0 }

    /// Runs `body` marked as delivering on the current thread.
    @usableFromInline
    package static func delivering<R>(_ body: () throws -> R) rethrows -> R {
        let outer = depth
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: outer + 1))
        defer { pthread_setspecific(key, UnsafeRawPointer(bitPattern: outer)) }
        return try body()
    }
}
