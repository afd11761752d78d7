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
}

/// The origin of ``SystemTimeSource/elapsed``: the first reading (a global's initializer runs once, thread-safely).
private let processOrigin = ContinuousClock.now

extension TimeSource where Self == SystemTimeSource {
    /// The system's clock.
    public static var system: SystemTimeSource { SystemTimeSource() }
}
