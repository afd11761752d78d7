public import MemoryPressureKit

/// What a memory-pressure plugin makes: the source whose events flush every service's unused resources.
public struct MemoryPressureComponent: PipelineComponent, Sendable {
    /// "memory pressure".
    public static let role = "memory pressure"
    /// The source.
    public var source: any MemoryPressureSource

    /// Makes a component.
    public init(_ source: any MemoryPressureSource) {
        self.source = source
    }
}
