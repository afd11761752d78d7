/// One delivery to one observer: the payload, and what it stands for.
///
/// While an observer has not signalled, newer payloads coalesce into the one waiting for it. A delivery says how
/// many payloads were folded into it, so no change goes unaccounted even when the observer never sees it.
public struct Delivery<Payload: Sendable>: Sendable {
    /// The payload: the latest one submitted, or the merge of all submitted since the last delivery.
    public var payload: Payload
    /// How many submitted payloads this delivery replaced (0 when it is the only one submitted since the last).
    public var supersededCount: Int

    /// Makes a delivery.
    public init(payload: Payload, supersededCount: Int = 0) {
        self.payload = payload
        self.supersededCount = supersededCount
    }
}
