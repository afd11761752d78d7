/// Runs a ``MemoryPressureSource`` and calls you for each event it reports: flush caches, release what can be
/// rebuilt.
///
/// Long-running work lives in ``run()``, as swift-service-lifecycle asks: run it in a task or a `ServiceGroup`
/// (PipelineKit does), and cancel that to stop.
///
/// Every running monitor also hears ``simulate(_:reason:)``: one line that acts as a memory warning for the whole
/// process, whatever each monitor's source — for tests, and for platforms with no warning of their own.
///
/// ```swift
/// let monitor = MemoryPressureMonitor(source: PSIMemoryPressureSource()) { _ in items.flushUnused() }
/// Task { await monitor.run() }
/// ```
public struct MemoryPressureMonitor: Sendable {
    /// The source watched.
    public let source: any MemoryPressureSource
    private let onPressure: @Sendable (MemoryPressureEvent) -> Void

    /// Makes a monitor that calls `onPressure` for each event `source` reports.
    public init(source: any MemoryPressureSource, onPressure: @escaping @Sendable (MemoryPressureEvent) -> Void) {
        self.source = source
        self.onPressure = onPressure
    }

    /// Watches until cancelled: the source, and the process-wide ``simulate(_:reason:)``.
    public func run() async {
        let (source, onPressure, simulated) = (source, onPressure, Self.simulated)
        await withDiscardingTaskGroup { group in
            group.addTask { await source.run(onPressure: onPressure) }
            group.addTask { await simulated.run(onPressure: onPressure) }
        }
    }

    /// Reports `level` to every monitor running in this process, as if each one's source had; returns how many
    /// monitors it reached. A part with no monitor running is not told, as it would not be of real pressure.
    @discardableResult
    public static func simulate(_ level: MemoryPressureLevel = .warning, reason: String = "simulated") -> Int {
        simulated.signal(level, reason: reason)
    }

    /// How many monitors are running in this process (for tests that must wait until one is).
    public static var runningCount: Int {
        simulated.watcherCount
    }

    /// What ``simulate(_:reason:)`` reaches: the whole process, except in a task that binds a source of its own —
    /// which a test does, so that its simulation cannot reach the monitors of tests running beside it.
    @TaskLocal package static var simulated = ManualMemoryPressureSource()
}
