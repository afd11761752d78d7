public import ServiceLifecycle
public import TransportKit

/// What a transport plugin makes: the transport, and the background part it needs run (an HTTP client that must
/// be shut down), if any.
public struct TransportComponent: PipelineComponent, Sendable {
    /// "transport".
    public static let role = "transport"
    /// The transport requests go through.
    public var transport: any Transport
    /// Run in the pipeline's `ServiceGroup`; shuts the transport down when the group stops.
    public var lifecycle: (any ServiceLifecycle.Service)?

    /// Makes a component.
    public init(_ transport: any Transport, lifecycle: (any ServiceLifecycle.Service)? = nil) {
        self.transport = transport
        self.lifecycle = lifecycle
    }
}
