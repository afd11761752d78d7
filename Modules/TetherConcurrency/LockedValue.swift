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
/// The value and its mutex share one allocation (``LockStorage``), and the box is a struct holding it: an object
/// that keeps a `LockedValue` reaches its lock in one hop, not three (each a cache miss when another core touched the
/// lock last — the common case for a lock shared by two threads). Copies of the box share the value.
///
/// `withLock` is inlinable so that generic callers are specialised in their own module; the pthread calls stay
/// behind two small functions, so no client needs the C library's module.
@usableFromInline
package struct LockedValue<Value> {
    @usableFromInline let storage: LockStorage<Value>

    @inlinable
    package init(_ value: Value) {
        storage = LockStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value. Never call user code from `body`.
    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, words in
            LockStorage<Value>.lock(words)
            defer { LockStorage<Value>.unlock(words) }
            return try body(&value.pointee)
        }
    }

    /// The value and the mutex by hand, with the mutex held, for a condition wait (see ``ConditionLock``): the
    /// value is read through the pointer afresh after every wake.
    func withMutexHeld<Result>(
        _ body: (UnsafeMutablePointer<Value>, UnsafeMutablePointer<pthread_mutex_t>) throws -> Result
    ) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, words in
            LockStorage<Value>.lock(words)
            defer { LockStorage<Value>.unlock(words) }
            return try body(value, LockStorage<Value>.mutex(at: words))
        }
    }
}

extension LockedValue: @unchecked Sendable where Value: Sendable {}

/// A ``LockedValue``'s one allocation: the value as the header, then the mutex in the words after it — a class's
/// storage never moves, as a `pthread_mutex_t` must not. The words are plain `UInt64`s so that inlinable code never
/// names the C type.
@usableFromInline
package final class LockStorage<Value>: ManagedBuffer<Value, UInt64> {
    @inlinable
    static func make(_ value: Value) -> LockStorage {
        let storage = unsafeDowncast(create(minimumCapacity: mutexWords) { _ in value }, to: LockStorage.self)
        storage.withUnsafeMutablePointerToElements { initialize($0) }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { words in
            _ = pthread_mutex_destroy(Self.mutex(at: words))
        }
    }

    /// How many words a `pthread_mutex_t` takes.
    @usableFromInline
    static var mutexWords: Int {
        (MemoryLayout<pthread_mutex_t>.size + MemoryLayout<UInt64>.size - 1) / MemoryLayout<UInt64>.size
    }

    static func mutex(at words: UnsafeMutablePointer<UInt64>) -> UnsafeMutablePointer<pthread_mutex_t> {
        UnsafeMutableRawPointer(words).assumingMemoryBound(to: pthread_mutex_t.self)
    }

    @usableFromInline
    static func initialize(_ words: UnsafeMutablePointer<UInt64>) {
        let mutex = UnsafeMutableRawPointer(words).bindMemory(to: pthread_mutex_t.self, capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    @usableFromInline
    static func lock(_ words: UnsafeMutablePointer<UInt64>) { pthread_mutex_lock(mutex(at: words)) }

    @usableFromInline
    static func unlock(_ words: UnsafeMutablePointer<UInt64>) { pthread_mutex_unlock(mutex(at: words)) }
}
