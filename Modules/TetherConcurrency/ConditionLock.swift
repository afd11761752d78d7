#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a pthread mutex, with a condition to wait on until the value says so: the blocking half of
/// Tether's waits. A thread that waits here sleeps in the kernel; it never spins or polls.
///
/// Block only where blocking is allowed — a thread of your own, a dispatch queue — never on Swift concurrency's
/// threads; the types built on this offer an `async` wait for those.
package final class ConditionLock<Value>: @unchecked Sendable {
    private let mutex = PThreadMutex()
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    // The mutex guarantees exclusive access, so the runtime's dynamic exclusivity check is redundant here.
    @exclusivity(unchecked) private var value: Value

    package init(_ value: Value) {
        self.value = value
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

    /// Runs `body` with exclusive access to the value, then wakes every waiter to look at it again.
    package func withLockThenBroadcast<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        mutex.lock()
        defer {
            pthread_cond_broadcast(condition)
            mutex.unlock()
        }
        return try body(&value)
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&value)
    }

    /// Blocks the calling thread until `isDone` holds, then runs `body` under the same lock. `isDone` is checked
    /// at once and after every broadcast.
    package func withLock<Result>(
        waitingUntil isDone: (Value) -> Bool, _ body: (inout Value) throws -> Result
    ) rethrows -> Result {
        mutex.lock()
        defer { mutex.unlock() }
        while !isDone(value) {
            mutex.wait(on: condition)
        }
        return try body(&value)
    }
}

extension PThreadMutex {
    /// Waits on `condition`, releasing this mutex meanwhile (which the caller holds).
    func wait(on condition: UnsafeMutablePointer<pthread_cond_t>) {
        _ = withUnsafeMutex { pthread_cond_wait(condition, $0) }
    }
}
