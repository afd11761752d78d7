#if os(Linux)
import CTetherTimer
import Glibc
import TetherConcurrency

/// One thread for the process that runs short calls at their deadlines (``SystemTimeSource/schedule(after:_:)`` on
/// Linux), woken by the kernel only when the earliest deadline has come.
///
/// The thread blocks in `read(2)` on a `timerfd` armed for the earliest deadline. Scheduling an earlier one re-arms
/// the timer from the scheduling thread, which does not wake this one: a call costs one thread wake-up, when it is
/// due. A task's `Task.sleep` on Linux goes through libdispatch's timers and then the task's executor: a live-query
/// engine that slept before each computation ahead of a slow observer's signal woke two or three threads more per
/// delivery than with this timer (Docs/LiveQueryBenchmarkLog.md, "One wake-up per computation ahead").
///
/// Deadlines are on `CLOCK_BOOTTIME`, the clock of `ContinuousClock` on Linux. The calls due at one wake-up run in
/// deadline order (and in the order they were scheduled, for equal deadlines), on this thread, one after another.
final class TimerThread: Sendable {
    /// The process's timer thread; nil if it could not be started (no file descriptor or thread to be had), and
    /// ``SystemTimeSource`` sleeps in a task instead.
    static let shared = TimerThread()

    private struct Call: Sendable {
        let deadline: Int64
        let order: UInt64
        let body: @Sendable () -> Void

        func precedes(_ other: Call) -> Bool {
            (deadline, order) < (other.deadline, other.order)
        }
    }

    private struct State: Sendable {
        /// Latest first: the next call due is the last.
        var calls: [Call] = []
        var scheduled: UInt64 = 0
        /// The deadline the timer is armed for; nil when it is not (nothing scheduled, or it has fired).
        var armed: Int64?
    }

    private let descriptor: Int32
    private let state = LockedValue(State())

    private init?() {
        descriptor = ctether_timer_create()
        guard descriptor >= 0 else { return nil }
        // The thread holds this instance for as long as it runs: the life of the process.
        let context = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<TimerThread>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context.toOpaque())
        guard started == 0 else {
            context.release()
            close(descriptor)
            return nil
        }
        pthread_detach(thread)
    }

    /// Runs `body` on this thread once `delay` has passed (at once when it is not positive), unless cancelled first.
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledCall {
        let deadline = Self.now() &+ Self.nanoseconds(delay)
        let order = state.withLock { state in
            state.scheduled += 1
            let call = Call(deadline: deadline, order: state.scheduled, body: body)
            // Kept latest first; an insertion among the few calls pending (one per engine, say).
            let index = state.calls.lastIndex { !$0.precedes(call) }.map { $0 + 1 } ?? 0
            state.calls.insert(call, at: index)
            if state.armed.map({ deadline < $0 }) ?? true { arm(deadline, &state) }
            return state.scheduled
        }
        return ScheduledCall { [self] in cancel(order) }
    }

    /// Removes the call scheduled as `order` if it is still pending. The timer, armed for it, is armed for the next
    /// call instead, or disarmed: a cancelled call wakes nobody.
    private func cancel(_ order: UInt64) {
        state.withLock { state in
            guard let index = state.calls.lastIndex(where: { $0.order == order }) else { return }
            let call = state.calls.remove(at: index)
            guard state.armed == call.deadline, !state.calls.contains(where: { $0.deadline == call.deadline }) else {
                return
            }
            if let next = state.calls.last {
                arm(next.deadline, &state)
            } else {
                ctether_timer_disarm(descriptor)
                state.armed = nil
            }
        }
    }

    private func run() {
        ctether_name_thread("tether.timer")
        while true {
            var expirations: UInt64 = 0
            // Blocks until the armed deadline; a re-arm from another thread does not end the wait.
            // An interrupted read (or any other failure, none of which this timer can meet) is taken as a wake-up:
            // only calls whose deadline has passed run.
            _ = read(descriptor, &expirations, MemoryLayout<UInt64>.size)
            let due = state.withLock { state -> [Call] in
                let now = Self.now()
                var due: [Call] = []
                while let last = state.calls.last, last.deadline <= now { due.append(state.calls.removeLast()) }
                // The timer is one-shot and has fired (or the wake-up was for a deadline since re-armed earlier).
                state.armed = nil
                if let next = state.calls.last { arm(next.deadline, &state) }
                return due
            }
            for call in due { call.body() }
        }
    }

    private func arm(_ deadline: Int64, _ state: inout State) {
        // An absolute time: a deadline already past fires at once.
        ctether_timer_arm(descriptor, deadline)
        state.armed = deadline
    }

    private static func now() -> Int64 {
        ctether_boot_time()
    }

    /// `duration` in whole nanoseconds, from 0 (a past deadline) to about 292 years.
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        guard seconds < Int64.max / 1_000_000_000 - 1 else { return Int64.max / 2 }
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
#endif
