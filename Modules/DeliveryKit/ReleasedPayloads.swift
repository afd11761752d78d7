/// The payloads one locked step of a lane lets go of, kept until the lock is released and dropped there.
///
/// A step releases at most two — a payload coalesced or withdrawn, then one skipped as unchanged or the last one
/// delivered, replaced — and cancelling at most three, so two are kept inline and any more in an array: no heap
/// allocation for the list on a lane's every submit and signal, where an array allocated one for its first element.
@usableFromInline
struct ReleasedPayloads<Payload: Sendable>: Sendable {
    @usableFromInline var first: Payload?
    @usableFromInline var second: Payload?
    @usableFromInline var more: [Payload] = []

    @inlinable
    init() {}

    /// Keeps `payload` until the list is dropped.
    @inlinable
    mutating func append(_ payload: Payload) {
        if first == nil {
            first = payload
        } else if second == nil {
            second = payload
        } else {
            more.append(payload)
        }
    }
}
