/// The role of a clock: what time it is, and how to wait.
///
/// Resources stamp data with ``now`` (wall-clock time, so that timestamps mean something after a restart) and wait
/// with ``sleep(for:)``. Inject `TetherTesting`'s `ManualTimeSource` to make expiry and delays deterministic.
public protocol TimeSource: Sendable {
    /// The current wall-clock time.
    var now: Date { get }

    /// Suspends for `duration`; throws `CancellationError` if the task is cancelled first.
    func sleep(for duration: Duration) async throws
}

/// The system's clock: `Date()` and `Task.sleep`.
public struct SystemTimeSource: TimeSource {
    /// Makes the system clock.
    public init() {}

    /// `Date()`.
    public var now: Date { Date() }

    /// `Task.sleep(for:)`.
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

extension TimeSource where Self == SystemTimeSource {
    /// The system's clock.
    public static var system: SystemTimeSource { SystemTimeSource() }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
