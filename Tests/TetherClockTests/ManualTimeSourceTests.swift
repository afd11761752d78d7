import Dispatch
import Foundation
import Synchronization
import Testing
import TetherClock

/// The manual clock: sleepers wake when the clock passes their deadline, in deadline order; a step of the wall clock
/// wakes nobody; cancellation wins whenever it comes.
@Suite("ManualTimeSource")
struct ManualTimeSourceTests {
    /// Records the order in which sleepers woke.
    final class Wakes: Sendable {
        private let list = Mutex<[Int]>([])
        func append(_ value: Int) { list.withLock { $0.append(value) } }
        var order: [Int] { list.withLock { $0 } }
    }

    /// Runs tasks one job at a time, in the order their jobs arrive.
    final class SerialTaskExecutor: TaskExecutor {
        private let queue = DispatchQueue(label: "tether.clock-tests.serial")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    @Test("Advancing wakes the sleepers due by then, earliest first, and no one else")
    func advanceWakesInOrder() async throws {
        let clock = ManualTimeSource()
        let wakes = Wakes()
        // The sleepers run on one serial queue, so that they record their wakes in the order the clock resumed
        // them (on the cooperative pool, two resumed at once would race to record).
        let serial = SerialTaskExecutor()
        let tasks = [3, 1, 2].map { seconds in
            Task(executorPreference: serial) {
                try await clock.sleep(for: .seconds(seconds))
                wakes.append(seconds)
            }
        }
        #expect(await clock.waitForSleepers(3))
        clock.advance(by: .seconds(2))
        for task in tasks[1...2] { try await task.value }
        #expect(wakes.order == [1, 2])
        #expect(clock.sleeperCount == 1, "the 3 s sleeper is still asleep")
        clock.advance(by: .seconds(1))
        try await tasks[0].value
        #expect(wakes.order == [1, 2, 3])
        #expect(clock.elapsed == .seconds(3))
    }

    @Test("Advancing moves `elapsed` by exactly the duration: a sleeper due in 20 ms wakes at the first 20 ms step")
    func exactSteps() async throws {
        let clock = ManualTimeSource()
        for _ in 0..<50 { clock.advance(by: .milliseconds(20)) }
        #expect(clock.elapsed == .seconds(1), "through a Date, fifty steps fell short by about 1 µs")
        // A sleep on the manual clock, the thing under test: it returns when the clock is stepped, not with time.
        let sleeper = Task { try await (clock as ManualTimeSource).sleep(for: .milliseconds(20)) }
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .milliseconds(20))
        #expect(clock.sleeperCount == 0, "woken by one step")
        try await sleeper.value
    }

    @Test("A step of the wall clock moves `now` only: no sleeper wakes, `elapsed` stays")
    func wallClockStep() async throws {
        let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 5000))
        let sleeper = Task { try await clock.sleep(for: .seconds(10)) }
        #expect(await clock.waitForSleepers(1))
        clock.stepWallClock(by: .seconds(3600))
        clock.stepWallClock(by: .seconds(-7200))
        #expect(clock.now == Date(timeIntervalSince1970: 5000 - 3600))
        #expect(clock.elapsed == .zero)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(10))
        try await sleeper.value
        #expect(clock.elapsed == .seconds(10))
    }

    @Test("`set(to:)` never moves the clock backwards")
    func setNeverBackwards() {
        let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))
        clock.set(to: Date(timeIntervalSince1970: 900))
        #expect(clock.now == Date(timeIntervalSince1970: 1000))
        #expect(clock.elapsed == .zero)
        clock.set(to: Date(timeIntervalSince1970: 1001.5))
        #expect(clock.elapsed == .milliseconds(1500))
    }

    @Test("Cancelling a sleeper throws CancellationError, asleep or not yet registered")
    func cancellation() async {
        let clock = ManualTimeSource()
        let asleep = Task { try await clock.sleep(for: .seconds(60)) }
        #expect(await clock.waitForSleepers(1))
        asleep.cancel()
        await #expect(throws: CancellationError.self) { try await asleep.value }
        #expect(clock.sleeperCount == 0, "a cancelled sleeper leaves the clock")

        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("A zero or negative sleep returns at once")
    func zeroSleep() async throws {
        let clock = ManualTimeSource()
        try await clock.sleep(for: .zero)
        try await clock.sleep(for: .seconds(-1))
        #expect(clock.sleeperCount == 0)
    }
}

@Suite("SystemTimeSource")
struct SystemTimeSourceTests {
    @Test("`elapsed` never goes backwards and `now` is the wall clock")
    func monotonic() {
        let clock = SystemTimeSource()
        var last = clock.elapsed
        for _ in 0..<1000 {
            let next = clock.elapsed
            #expect(next >= last)
            last = next
        }
        #expect(abs(clock.now.timeIntervalSince(Date())) < 60)
    }

    @Test("Duration.timeInterval keeps sub-second precision")
    func timeInterval() {
        #expect(Duration.milliseconds(1500).timeInterval == 1.5)
        #expect(Duration.nanoseconds(1).timeInterval == 1e-9)
        #expect(Duration.seconds(-2).timeInterval == -2)
    }
}
