#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When the inspector first saw each observation alive, so that it can tell how long the oldest of an owner type's
/// observations has lived — a screen that should have closed long ago. Kept by the inspector from one inspection to
/// the next (the core records no time per observer): an age counts from the first inspection that saw it.
struct ObservationAges: Sendable {
    /// An observation: where it is (a service's resource or a store) and its id there.
    struct Key: Hashable, Sendable {
        var place: String
        var id: UInt64
    }

    private var firstSeen: [Key: Date] = [:]
    private var seenNow: Set<Key> = []

    /// Records `key` as alive at `now`; returns how long it has been seen alive.
    mutating func see(_ key: Key, at now: Date) -> Double {
        seenNow.insert(key)
        let first = firstSeen[key] ?? now
        firstSeen[key] = first
        return max(0, now.timeIntervalSince(first))
    }

    /// Ends an inspection: forgets the observations it did not see (gone, or no longer observing).
    mutating func finishInspection() {
        firstSeen = firstSeen.filter { seenNow.contains($0.key) }
        seenNow.removeAll(keepingCapacity: true)
    }
}
