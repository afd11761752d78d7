public import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A number that only grows — a ticket delivered, a commit applied — and waits, blocking or suspended, until it
/// reaches a mark. Advancing costs one atomic addition and one load while nobody waits; a waiter sleeps on a
/// condition (or suspends), never polls.
@usableFromInline
package final class Watermark: Sendable {
    @usableFromInline let current = Atomic<UInt64>(0)
    /// Threads and tasks waiting now: an advance wakes them only when there are some.
    @usableFromInline let waiting = Atomic<Int>(0)
    let waiters = AtomicLazyReference<WaitList>()

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
    /// The drainer a removal waits for is usually a few microseconds from done: the thread first yields the
    /// processor a bounded number of times (as an adaptive mutex spins briefly), and only then sleeps on the
    /// condition. Under eight threads on two cores it brings OwnershipKit's stress test from 29.5 s (sleeping at
    /// once) to 19–20.5 s (the polling it replaces took 17.7 s).
    package func wait(until mark: UInt64) {
        for _ in 0..<Self.yieldsBeforeSleeping where value < mark {
            sched_yield()
        }
        guard value < mark else { return }
        waiting.add(1, ordering: .sequentiallyConsistent)
        defer { waiting.subtract(1, ordering: .sequentiallyConsistent) }
        waiters.storeIfNil(WaitList()).block { current.load(ordering: .sequentiallyConsistent) >= mark }
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
