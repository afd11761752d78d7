public import Logging

/// The loggers a ``Service`` writes to, one per category, so that each can be tuned on its own.
///
/// By default they are `Logger(label: "tether.resource.<category>")`, which go wherever `LoggingSystem` is
/// bootstrapped to send them. Everything is logged at `debug` or `trace`, except failures (`warning`) and
/// misconfigurations (`error`).
public struct ResourceLogging: Sendable {
    /// Requests and responses.
    public var network: Logger
    /// Changes to resources' data, errors and loading state.
    public var stateChanges: Logger
    /// Observers added and stopped.
    public var observers: Logger
    /// Why `loadIfNeeded` did or did not load.
    public var staleness: Logger
    /// The resource cache: creation, flushes, the count limit.
    public var cache: Logger
    /// Bad configuration and bad input (invalid URLs).
    public var configuration: Logger

    /// Makes loggers labelled `<label>.network`, `<label>.state`, `<label>.observers`, `<label>.staleness`,
    /// `<label>.cache` and `<label>.configuration`.
    public init(label: String = "tether.resource") {
        network = Logger(label: label + ".network")
        stateChanges = Logger(label: label + ".state")
        observers = Logger(label: label + ".observers")
        staleness = Logger(label: label + ".staleness")
        cache = Logger(label: label + ".cache")
        configuration = Logger(label: label + ".configuration")
    }
}
