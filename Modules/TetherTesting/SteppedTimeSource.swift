public import Foundation
public import TetherClock
import TetherConcurrency

/// A manual clock whose scheduled calls (``TetherClock/TimeSource/schedule(after:_:)``) run only when the test runs
/// them (``run(_:)``), and which records which were cancelled: the moment a timer fires is the test's to choose, and
/// a test can tell a timer that was cancelled from one that merely has not run. Everything else is `base`'s.
///
/// ```swift
/// let clock = SteppedTimeSource()
/// // …code under test schedules a call on `clock`…
/// clock.base.advance(by: .milliseconds(10))
/// #expect(clock.isCancelled(0))
/// clock.run(0)  // as if the timer had fired anyway
/// ```
public final class SteppedTimeSource: TimeSource {
    /// The clock `now`, `elapsed` and `sleep(for:)` read: advance it by hand.
    public let base = ManualTimeSource()
    private let calls = LockedValue<[(body: @Sendable () -> Void, isCancelled: Bool)]>([])

    /// Makes a stepped clock on a new manual one.
    public init() {}

    /// `base`'s.
    public var now: Date { base.now }

    /// `base`'s.
    public var elapsed: Duration { base.elapsed }

    /// `base`'s: returns once `base` has been advanced past `duration`.
    public func sleep(for duration: Duration) async throws {
        try await base.sleep(for: duration)
    }

    /// Records `body`, to run only when the test calls ``run(_:)``; its cancellation is recorded too.
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledCall {
        let index = calls.withLock { calls in
            calls.append((body, false))
            return calls.count - 1
        }
        return ScheduledCall { [calls] in calls.withLock { $0[index].isCancelled = true } }
    }

    /// How many calls were scheduled.
    public var scheduledCount: Int { calls.withLock { $0.count } }

    /// Whether the call scheduled `index`-th (from 0) was cancelled.
    public func isCancelled(_ index: Int) -> Bool { calls.withLock { $0[index].isCancelled } }

    /// Runs the call scheduled `index`-th, cancelled or not.
    public func run(_ index: Int) {
        calls.withLock { $0[index].body }()
    }
}
