public import MutationOutboxKit

/// How a service's mutations are kept and sent (``Service/mutationConfiguration``).
///
/// ```swift
/// service.mutationConfiguration.outbox = try SQLiteMutationOutbox(path: directory + "/outbox.sqlite")
/// service.mutationConfiguration.isDurable = true
/// ```
public struct MutationConfiguration: Sendable {
    /// Which durable mutations wait for which.
    public enum Order: Sendable, Hashable {
        /// A resource's durable mutations are sent one at a time, in the order they were made; those of different
        /// resources go side by side.
        case perResource
        /// All the service's durable mutations are sent one at a time, in the order they were made.
        case perService
    }

    /// Where durable mutations are written before `mutate` returns; nil (the default): nowhere, and a durable
    /// mutation fails at once saying so.
    public var outbox: (any MutationOutbox)?
    /// Whether a mutation is durable when its `durable:` argument is not given. Default false.
    public var isDurable = false
    /// Which durable mutations wait for which. Default ``Order/perResource``.
    public var order = Order.perResource
    /// The wait before a durable mutation is tried again after a transient failure (no connection, `408`, `429`,
    /// a `5xx`). It doubles after each failure, up to ``maxRetryBackoff``, and any response from the server to
    /// another request of the service ends it early: the server is back. Default 1 second.
    public var retryBackoff: Duration = .seconds(1)
    /// The longest wait between two attempts. Default 60 seconds.
    public var maxRetryBackoff: Duration = .seconds(60)

    /// Makes the defaults: no outbox, nothing durable.
    public init() {}
}
