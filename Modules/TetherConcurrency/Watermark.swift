public import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A number that only grows — a ticket delivered, a commit applied — and waits until it reaches a mark: a task
/// suspends, never polls; a thread backs off (see the blocking `wait(until:)`). Advancing costs one atomic store and one
/// load while no task waits.
@usableFromInline
package final class Watermark: Sendable {
    @usableFromInline let current = Atomic<UInt64>(0)
    /// Tasks suspended now: an advance wakes them only when there are some.
    @usableFromInline let waiting = Atomic<Int>(0)
    let waiters = LazyReference<WaitList>()

    /// How many times a blocking wait yields the processor before it sleeps.
    static let yieldsBeforeSleeping = 64

    @inlinable
    package init() {}

    /// The current value.
    @inlinable
    package var value: UInt64 {
        current.load(ordering: .acquiring)
    }

    /// Raises the value to `mark` (a lower mark changes nothing) and wakes those waiting for it. Only one thread
    /// advances a given watermark at a time.
    @inlinable
    package func advance(to mark: UInt64) {
        let now = current.load(ordering: .relaxed)
        guard mark > now else { return }
        current.store(mark, ordering: .sequentiallyConsistent)
        // Sequentially consistent on both sides: either this load sees a waiter, or the waiter sees the new value.
        if waiting.load(ordering: .sequentiallyConsistent) > 0 { wake(at: mark) }
    }

    /// Blocks the calling thread until the value is at least `mark`.
    ///
    /// A removal waits here for the table's drainer, which is usually microseconds from done, so this backs off
    /// instead of sleeping on the condition: it yields the processor 64 times, then sleeps 1 µs, 2 µs, … up to 1 ms
    /// between looks. On a condition, every advance would wake every sleeping remover at once, and under contention
    /// (OwnershipKit's 8-thread stress test) that costs far more than the backing off. Tasks use the `async` form,
    /// which suspends and never polls.
    package func wait(until mark: UInt64) {
        var attempt = 0
        while value < mark {
            if attempt < Self.yieldsBeforeSleeping {
                sched_yield()
            } else {
                usleep(UInt32(min(1000, 1 << min(attempt - Self.yieldsBeforeSleeping, 10))))
            }
            attempt += 1
        }
    }

    /// Suspends until the value is at least `mark`.
    package func wait(until mark: UInt64) async {
        guard value < mark else { return }
        waiting.add(1, ordering: .sequentiallyConsistent)
        defer { waiting.subtract(1, ordering: .sequentiallyConsistent) }
        await waiters.storeIfNil(WaitList()).suspend(key: mark) {
            current.load(ordering: .sequentiallyConsistent) >= mark
        }
    }

    @usableFromInline
    func wake(at value: UInt64) {
        waiters.load()?.wake { $0 <= value }
    }
}
