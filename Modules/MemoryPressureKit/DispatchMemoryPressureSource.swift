#if canImport(Darwin)
import Dispatch

/// Memory pressure from the system, on Apple platforms: the dispatch memory-pressure source.
public struct DispatchMemoryPressureSource: MemoryPressureSource {
    /// "dispatch".
    public let name = "dispatch"

    /// Makes the source.
    public init() {}

    /// Watches until cancelled.
    public func run(onPressure: @escaping @Sendable (MemoryPressureEvent) -> Void) async {
        let source = DispatchSource.makeMemoryPressureSource(eventMask: [.warning, .critical], queue: .global())
        source.setEventHandler {
            let critical = source.data.contains(.critical)
            onPressure(MemoryPressureEvent(level: critical ? .critical : .warning, reason: "dispatch memory pressure"))
        }
        source.activate()
        await waitForCancellation()
        source.cancel()
    }
}
#endif
