public import Foundation
public import TetherClock
import TetherConcurrency

/// A time source whose next reading of `elapsed` a test can hold at a gate: to stop the code that reads it at that
/// very moment (the live-query engine reads the clock as it starts an observer), do something meanwhile, and let it
/// go on. The reading blocks its thread, so hold only code that runs on a queue of its own. Everything else is
/// `base`'s — a `ManualTimeSource` keeps the rest of the test free of real time.
///
/// ```swift
/// let clock = HeldTimeSource(base: ManualTimeSource())
/// let gate = clock.holdNextElapsedRead()
/// // …something reads the clock: it is held…
/// try await eventually { gate.isReached }
/// gate.open()
/// ```
public final class HeldTimeSource: TimeSource {
    private let base: any TimeSource
    private let nextGate = LockedValue<AsyncGate?>(nil)

    /// Wraps `base`.
    public init(base: any TimeSource) {
        self.base = base
    }

    /// Holds the next reading of ``elapsed`` at the returned gate until it is opened.
    public func holdNextElapsedRead() -> AsyncGate {
        let gate = AsyncGate()
        nextGate.withLock { $0 = gate }
        return gate
    }

    /// `base`'s.
    public var now: Date { base.now }

    /// `base`'s, once the gate set by ``holdNextElapsedRead()`` (if any) is open.
    public var elapsed: Duration {
        nextGate.withLock { $0.take() }?.passBlocking()
        return base.elapsed
    }

    /// `base`'s.
    public func sleep(for duration: Duration) async throws {
        try await base.sleep(for: duration)
    }

    /// `base`'s.
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledCall {
        base.schedule(after: delay, body)
    }
}
