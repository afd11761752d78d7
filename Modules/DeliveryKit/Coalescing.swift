/// What a lane does with a payload submitted while another is already waiting.
public struct Coalescing<Payload: Sendable>: Sendable {
    /// How payloads merge; nil for ``latest``, which keeps no closure: a lane is made per observer, and a closure made
    /// in a generic context is a heap allocation each time.
    @usableFromInline let merging: (@Sendable (_ waiting: Payload, _ newer: Payload) -> Payload)?

    /// Combines the waiting payload with a newer one into the one that waits from now on.
    public var combine: @Sendable (_ waiting: Payload, _ newer: Payload) -> Payload {
        merging ?? { _, newer in newer }
    }

    /// Replace the waiting payload with the newer one (the default): the observer gets the latest state.
    public static var latest: Coalescing {
        Coalescing(merging: nil)
    }

    /// Merge the waiting payload with the newer one, for payloads that describe changes rather than states
    /// (for example, a diff that must stay relative to the last snapshot actually delivered).
    public static func merge(_ combine: @escaping @Sendable (_ waiting: Payload, _ newer: Payload) -> Payload)
        -> Coalescing
    {
        Coalescing(merging: combine)
    }

    /// The payload that waits from now on, `waiting` having been superseded by `newer`.
    @inlinable
    func coalesce(_ waiting: Payload, _ newer: Payload) -> Payload {
        guard let merging else { return newer }
        return merging(waiting, newer)
    }
}
