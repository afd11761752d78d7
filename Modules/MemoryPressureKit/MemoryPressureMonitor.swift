/// Runs a ``MemoryPressureSource`` and calls you for each event it reports: flush caches, release what can be
/// rebuilt.
///
/// Long-running work lives in ``run()``, as swift-service-lifecycle asks: run it in a task or a `ServiceGroup`
/// (PipelineKit does), and cancel that to stop.
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

    /// Watches until cancelled.
    public func run() async {
        await source.run(onPressure: onPressure)
    }
}
