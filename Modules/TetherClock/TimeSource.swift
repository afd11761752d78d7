#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The role of a clock: what time it is, how much time has passed, and how to wait.
///
/// Resources stamp data with ``now`` (wall-clock time, so that timestamps mean something after a restart), measure
/// ages in the process with ``elapsed`` (which never steps, whatever happens to the wall clock) and wait with
/// ``sleep(for:)``. Inject ``ManualTimeSource`` to make expiry and delays deterministic.
public protocol TimeSource: Sendable {
    /// The current wall-clock time. It may step, backwards or forwards (NTP, a user setting the clock).
    var now: Date { get }

    /// Monotonic time since an arbitrary origin fixed for the process: differences are true durations, never
    /// changed by a step of ``now``.
    var elapsed: Duration { get }

    /// Suspends for `duration`; throws `CancellationError` if the task is cancelled first.
    func sleep(for duration: Duration) async throws

    /// Calls `body` once `delay` has passed on this source's monotonic clock (``elapsed``), on a thread of the
    /// source's choosing: a timer for work that only decides and hands over, such as resuming a continuation.
    /// `body` must return quickly and never block — it may share its thread with every other timer of the process.
    /// Only the returned call's ``ScheduledCall/cancel()`` cancels it: hold what it needs weakly.
    ///
    /// The default sleeps in a task of its own (``sleep(for:)``), so a ``ManualTimeSource`` runs `body` when advanced
    /// past the delay. ``SystemTimeSource`` on Linux uses one timer thread for the process instead, which costs no
    /// thread wake-up to schedule, one to run, and none once cancelled.
    @discardableResult
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledCall
}

extension TimeSource {
    /// Sleeps `delay` in a task of its own (``sleep(for:)``), then calls `body`; cancelling the call cancels the task.
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledCall {
        scheduleInSleepingTask(after: delay, body)
    }

    /// The default ``schedule(after:_:)``, for a source that uses it only sometimes (``SystemTimeSource``).
    func scheduleInSleepingTask(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledCall {
        let task = Task { [self] in
            do { try await sleep(for: delay) } catch { return }
            // A sleep that ended as the task was cancelled: the call was cancelled before it started.
            guard !Task.isCancelled else { return }
            body()
        }
        return ScheduledCall { task.cancel() }
    }
}

/// The system's clock: `Date()` and `Task.sleep`.
public struct SystemTimeSource: TimeSource {
    /// Makes the system clock.
    public init() {}

    /// `Date()`.
    public var now: Date { Date() }

    /// `ContinuousClock`'s time since the first reading in the process.
    public var elapsed: Duration { ContinuousClock.now - processOrigin }

    /// `Task.sleep(for:)`.
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }

    /// On Linux, the process's timer thread: a `timerfd` on the clock of ``elapsed``, armed for the earliest call, so
    /// that scheduling wakes no thread and a call due wakes one. Elsewhere (or if that thread could not be started),
    /// a task's sleep.
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledCall {
        #if os(Linux)
        if let timer = TimerThread.shared { return timer.schedule(after: delay, body) }
        #endif
        return scheduleInSleepingTask(after: delay, body)
    }
}

/// The origin of ``SystemTimeSource/elapsed``: the first reading (a global's initializer runs once, thread-safely).
private let processOrigin = ContinuousClock.now

extension TimeSource where Self == SystemTimeSource {
    /// The system's clock.
    public static var system: SystemTimeSource { SystemTimeSource() }
}
