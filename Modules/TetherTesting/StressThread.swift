import Foundation
import TetherConcurrency

/// Starts `count` threads for a stress test's workers. Each runs `body` with its index and a `pace` function to call
/// once per iteration.
///
/// Stress workers loop as fast as they can. Eight of them on a two-core machine, unpaced, starve everything else in
/// the test process — the tests running beside them, and the stress test's own writer or loads on Swift
/// concurrency's threads — most of all under ThreadSanitizer, where a run once made no commit in 20 s. `pace` sleeps
/// a quarter of a millisecond, which leaves the processor to the rest at every iteration. (Lowering the workers'
/// priority instead — `SCHED_IDLE` — made it worse: a worker preempted while holding a store's or table's lock held
/// everyone else up.)
public func startStressThreads(
    _ count: Int, _ body: @escaping @Sendable (_ index: Int, _ pace: () -> Void) -> Void
) -> StressThreads {
    let running = StressThreads(count: count)
    for index in 0..<count {
        let thread = Thread {
            body(index) { usleep(250) }
            running.finished()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    return running
}

/// The workers ``startStressThreads(_:_:)`` started, counted down as they finish.
public final class StressThreads: Sendable {
    let remaining: LockedValue<Int>

    init(count: Int) {
        remaining = LockedValue(count)
    }

    func finished() {
        remaining.withLock { $0 -= 1 }
    }

    /// Whether every worker has returned.
    public var allFinished: Bool { remaining.withLock { $0 } == 0 }

    /// Suspends until every worker has returned (a correctness deadline of `deadline`).
    public func wait(within deadline: Duration) async throws {
        try await eventually(within: deadline) { self.allFinished }
    }
}
