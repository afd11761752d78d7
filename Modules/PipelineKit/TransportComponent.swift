public import ServiceLifecycle
public import TransportKit

/// What a transport plugin makes: the transport, and the background part it needs run (an HTTP client that must
/// be shut down), if any.
public struct TransportComponent: PipelineComponent, Sendable {
    /// The transport requests go through.
    package var transport: any Transport
    /// Run in the pipeline's `ServiceGroup`; shuts the transport down when the group stops.
    package var lifecycle: (any ServiceLifecycle.Service)?

    /// Makes a component.
    public init(_ transport: any Transport, lifecycle: (any ServiceLifecycle.Service)? = nil) {
        self.transport = transport
        self.lifecycle = lifecycle
    }
}
