/// What a lane does with a payload submitted while another is already waiting.
public struct Coalescing<Payload: Sendable>: Sendable {
    /// Combines the waiting payload with a newer one into the one that waits from now on.
    public let combine: @Sendable (_ waiting: Payload, _ newer: Payload) -> Payload

    /// Replace the waiting payload with the newer one (the default): the observer gets the latest state.
    public static var latest: Coalescing {
        Coalescing { _, newer in newer }
    }

    /// Merge the waiting payload with the newer one, for payloads that describe changes rather than states
    /// (for example, a diff that must stay relative to the last snapshot actually delivered).
    public static func merge(_ combine: @escaping @Sendable (_ waiting: Payload, _ newer: Payload) -> Payload)
        -> Coalescing
    {
        Coalescing(combine: combine)
    }
}
