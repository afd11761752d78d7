import Foundation
import TetherConcurrency

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starts `count` threads for a stress test's workers, each running `body` with its index, at the lowest scheduling
/// priority (`SCHED_IDLE` on Linux, background quality of service on Apple platforms).
///
/// Stress workers loop as fast as they can. At normal priority, eight of them on a two-core machine starve
/// everything else in the test process — the tests running beside them, and the stress test's own writer or
/// loads, which run on Swift concurrency's threads — most of all under ThreadSanitizer. At the lowest priority they
/// take what the machine has spare. Returns a counter of workers still running.
public func startStressThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> StressThreads {
    let running = StressThreads(count: count)
    for index in 0..<count {
        let thread = Thread {
            lowerCurrentThreadPriority()
            body(index)
            running.finished()
        }
        thread.stackSize = 1 << 20
        #if canImport(Darwin)
        thread.qualityOfService = .background
        #endif
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

private func lowerCurrentThreadPriority() {
    #if os(Linux)
    // SCHED_IDLE (5 in <linux/sched.h>; glibc declares it only under _GNU_SOURCE, so Swift does not see it): the
    // thread runs only when nothing at normal priority wants the processor. Any thread may lower itself to it.
    let schedIdle: Int32 = 5
    var parameters = sched_param()
    _ = pthread_setschedparam(pthread_self(), schedIdle, &parameters)
    #endif
}
