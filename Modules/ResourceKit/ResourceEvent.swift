/// What happened to a resource. Observers read the resource's state (``Resource/latestData``,
/// ``Resource/latestError``, ``Resource/isLoading``) rather than the event: the state is always current, and under a
/// coalescing delivery policy some events are superseded by later ones.
public enum ResourceEvent: Sendable, Hashable, CustomStringConvertible {
    /// Sent to an observer when it is added, and only to it: a cue to show the resource's current state.
    case observerAdded
    /// A load began. ``Resource/isLoading`` is already true.
    case requested
    /// A load was cancelled. The resource's data and error are unchanged; ``Resource/isLoading`` is false.
    case requestCancelled
    /// ``Resource/latestData`` changed; `source` says how.
    case newData(NewDataSource)
    /// A load found the data unchanged (HTTP 304): the data's timestamp was touched, nothing else.
    case notModified
    /// A load failed: ``Resource/latestError`` is set; ``Resource/latestData`` is unchanged.
    case error

    /// The event's name, as logged.
    public var description: String {
        switch self {
        case .observerAdded: "observerAdded"
        case .requested: "requested"
        case .requestCancelled: "requestCancelled"
        case .newData(let source): "newData(\(source))"
        case .notModified: "notModified"
        case .error: "error"
        }
    }
}

/// Where new data came from.
public enum NewDataSource: Sendable, Hashable {
    /// A response from the network.
    case network
    /// A persistent cache.
    case cache
    /// ``Resource/overrideLocalData(with:)``.
    case localOverride
    /// ``Resource/wipe()``: the data is now nil.
    case wipe
    /// A mutation's optimistic update is shown (see ``Resource/mutate(_:body:contentType:headers:optimistic:onSuccess:invalidates:durable:)``).
    case optimistic
    /// A failed or cancelled mutation's optimistic update was taken away: the data is as if it had never been
    /// applied.
    case rollback
}
