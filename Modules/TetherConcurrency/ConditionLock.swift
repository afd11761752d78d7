#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``LockedValue`` with a condition to wait on until the value says so: the blocking half of Tether's waits. A
/// thread that waits here sleeps in the kernel; it never spins or polls.
///
/// Block only where blocking is allowed — a thread of your own, a dispatch queue — never on Swift concurrency's
/// threads; the types built on this offer an `async` wait for those.
package final class ConditionLock<Value>: @unchecked Sendable {
    private let locked: LockedValue<Value>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    package init(_ value: Value) {
        locked = LockedValue(value)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let status = pthread_cond_init(condition, nil)
        precondition(status == 0, "pthread_cond_init failed with \(status)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try locked.withLock(body)
    }

    /// Runs `body` with exclusive access to the value, then wakes every waiter to look at it again.
    package func withLockThenBroadcast<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try locked.withLock { value in
            defer { pthread_cond_broadcast(condition) }
            return try body(&value)
        }
    }

    /// Blocks the calling thread until `isDone` holds, then runs `body` under the same lock. `isDone` is checked
    /// at once and after every broadcast.
    package func withLock<Result>(
        waitingUntil isDone: (Value) -> Bool, _ body: (inout Value) throws -> Result
    ) rethrows -> Result {
        // The mutex by hand, not `locked.withLock`: its `inout` must not be held across the wait, while other
        // threads change the value; the storage is read afresh after every wake.
        try locked.withMutexHeld { value, mutex in
            while !isDone(value.pointee) {
                _ = pthread_cond_wait(condition, mutex)
            }
            return try body(&value.pointee)
        }
    }
}
