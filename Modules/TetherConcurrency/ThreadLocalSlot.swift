#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One pointer-sized value per thread, on a `pthread_key_t`: cheaper than `@TaskLocal` on the paths that use it
/// (a few nanoseconds), and usable from synchronous code on any thread. Make one per purpose, as a `static let`.
package struct ThreadLocalSlot: Sendable {
    private let key: pthread_key_t

    /// Creates the slot; every thread starts with nil.
    package init() {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed with \(status): the process is out of thread-local keys")
        self.key = key
    }

    /// This thread's value.
    package var value: UnsafeMutableRawPointer? {
        get { pthread_getspecific(key) }
        nonmutating set { pthread_setspecific(key, newValue) }
    }
}
