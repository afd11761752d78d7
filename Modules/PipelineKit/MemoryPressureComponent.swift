public import MemoryPressureKit

/// What a memory-pressure plugin makes: the source whose events flush every service's unused resources.
public struct MemoryPressureComponent: PipelineComponent, Sendable {
    /// The source.
    package var source: any MemoryPressureSource

    /// Makes a component.
    public init(_ source: any MemoryPressureSource) {
        self.source = source
    }
}
