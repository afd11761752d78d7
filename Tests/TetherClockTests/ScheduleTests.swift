import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TetherTestingTraits

/// `TimeSource.schedule(after:_:)`: the system clock's timer (on Linux, one thread woken by a timerfd) and the
/// default, a task's sleep on the source's own clock.
@Suite("Scheduled calls", .timeLimit(minutes: 1))
struct ScheduleTests {
    /// Counts calls and records their order; resumes a waiter once `expected` calls have come.
    final class Calls: Sendable {
        private struct State {
            var order: [Int] = []
            var waiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?
        }
        /// A `LockedValue`, not `Synchronization.Mutex`: ThreadSanitizer cannot see the mutex's synchronization, and
        /// reported a race between a call recorded on the timer thread and the waiter (see Docs/Testing.md).
        private let state = LockedValue(State())

        func record(_ value: Int) {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.order.append(value)
                guard let waiter = state.waiter, state.order.count >= waiter.count else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            waiter?.resume()
        }

        /// Returns once `count` calls have come in all.
        func wait(for count: Int) async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    guard state.order.count < count else { return true }
                    state.waiter = (count, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        var order: [Int] { state.withLock { $0.order } }
    }

    @Test("The system clock's call runs once its delay has passed, not before")
    func systemRunsAfterTheDelay() async {
        let clock = SystemTimeSource()
        let calls = Calls()
        let ran = LockedValue<Duration?>(nil)
        let start = clock.elapsed
        clock.schedule(after: .milliseconds(30)) {
            ran.withLock { $0 = clock.elapsed }
            calls.record(1)
        }
        await calls.wait(for: 1)
        let at = ran.withLock { $0 }
        #expect(at.map { $0 - start >= .milliseconds(30) } == true, "ran \(String(describing: at)) after \(start)")
    }

    @Test("The system clock's calls run in deadline order, whatever the order they were scheduled in")
    func systemRunsInDeadlineOrder() async {
        let clock = SystemTimeSource()
        let calls = Calls()
        // 10 ms apart: each deadline is a distinct point, so that the order is the deadlines' however late the
        // timer's thread runs (calls due at one wake-up run in deadline order too).
        let delays = [50, 10, 40, 20, 30, 60, 0]
        for delay in delays {
            clock.schedule(after: .milliseconds(delay)) { calls.record(delay) }
        }
        await calls.wait(for: delays.count)
        #expect(calls.order == delays.sorted())
    }

    @Test("A call due before the one the timer waits for runs first, without waiting for it")
    func systemEarlierCallIsNotHeldUp() async {
        let clock = SystemTimeSource()
        let calls = Calls()
        // The timer is armed for an hour from now; the next call must re-arm it (or this test meets its time limit).
        clock.schedule(after: .seconds(3600)) { calls.record(3600) }
        clock.schedule(after: .milliseconds(10)) { calls.record(10) }
        await calls.wait(for: 1)
        #expect(calls.order == [10])
    }

    @Test("A cancelled call never runs; the calls before and after it do")
    func systemCancelled() async {
        let clock = SystemTimeSource()
        let calls = Calls()
        clock.schedule(after: .milliseconds(10)) { calls.record(10) }
        let cancelled = clock.schedule(after: .milliseconds(30)) { calls.record(30) }
        clock.schedule(after: .milliseconds(50)) { calls.record(50) }
        cancelled.cancel()
        await calls.wait(for: 2)
        #expect(calls.order == [10, 50])
    }

    @Test("Cancelling the call the timer is armed for arms it for the next; alone, disarms it; after its run, nothing")
    func systemCancelledEarliest() async {
        let clock = SystemTimeSource()
        let calls = Calls()
        let earliest = clock.schedule(after: .milliseconds(10)) { calls.record(10) }
        clock.schedule(after: .milliseconds(40)) { calls.record(40) }
        earliest.cancel()
        await calls.wait(for: 1)  // the later call still runs: the timer was armed for it (or the time limit fails)
        let alone = clock.schedule(after: .milliseconds(20)) { calls.record(20) }
        alone.cancel()
        let after = clock.schedule(after: .milliseconds(30)) { calls.record(30) }
        await calls.wait(for: 2)
        after.cancel()
        after.cancel()
        #expect(calls.order == [40, 30])
    }

    @Test("The default: a cancelled call's task ends, and it never runs when the clock is advanced past its delay")
    func manualCancelled() async throws {
        let clock = ManualTimeSource()
        let calls = Calls()
        let cancelled = clock.schedule(after: .milliseconds(10)) { calls.record(10) }
        #expect(await clock.waitForSleepers(1))
        cancelled.cancel()
        try await eventually { clock.sleeperCount == 0 }
        clock.schedule(after: .milliseconds(20)) { calls.record(20) }
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .milliseconds(30))
        await calls.wait(for: 1)
        #expect(calls.order == [20])
    }

    @Test("A zero or negative delay runs the call at once")
    func systemZeroAndNegative() async {
        let clock = SystemTimeSource()
        let calls = Calls()
        clock.schedule(after: .zero) { calls.record(0) }
        clock.schedule(after: .seconds(-5)) { calls.record(-5) }
        await calls.wait(for: 2)
        #expect(calls.order.sorted() == [-5, 0])
    }

    @Test("Calls scheduled from eight threads at once each run exactly once")
    func systemManyThreads() async {
        let clock = SystemTimeSource()
        let calls = Calls()
        let perThread = 200
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    for index in 0..<perThread {
                        clock.schedule(after: .microseconds((index * 37 + thread * 11) % 5_000)) {
                            calls.record(thread * perThread + index)
                        }
                    }
                }
            }
        }
        await calls.wait(for: 8 * perThread)
        // A call due after all of them: once it has run, any call run twice would have shown by then.
        clock.schedule(after: .milliseconds(10)) { calls.record(-1) }
        await calls.wait(for: 8 * perThread + 1)
        let order = calls.order
        #expect(order.last == -1)
        #expect(Set(order.dropLast()) == Set(0..<8 * perThread))
        #expect(order.count == 8 * perThread + 1)
    }

    @Test("The default sleeps on the source's clock: a manual clock runs each call when advanced past its delay")
    func defaultUsesTheSourcesSleep() async throws {
        let clock = ManualTimeSource()
        let calls = Calls()
        clock.schedule(after: .seconds(5)) { calls.record(5) }
        clock.schedule(after: .seconds(3)) { calls.record(3) }
        try await eventually { clock.sleeperCount == 2 }
        clock.advance(by: .seconds(4))
        await calls.wait(for: 1)
        // The five-second call still sleeps: the clock has not passed its delay.
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        await calls.wait(for: 2)
        #expect(calls.order == [3, 5])
    }
}
