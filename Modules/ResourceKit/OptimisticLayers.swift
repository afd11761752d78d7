#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The optimistic layers of a resource's pending mutations, over the confirmed data beneath them.
///
/// Immutable: every change makes a new value, so that its identity tells whether what was computed from it, outside
/// the resource's lock, is still current. A resource holds one only while a mutation is pending; without one, its
/// `latestData` is its confirmed data.
final class OptimisticLayers: Sendable {
    /// One pending mutation's layer.
    struct Layer: Sendable {
        /// The mutation's number, unique in the process.
        let id: UInt64
        let apply: OptimisticUpdate.Apply
        /// When the mutation began: the timestamp of content shown over no data.
        let began: Date
        /// Set when the mutation succeeded and the resource reloads: the layer goes when a load begun at this count
        /// of invalidations, or later, ends.
        var removedByLoadFrom: UInt64?
    }

    /// What the server, the persistent cache or a local override last gave.
    let confirmed: Entity?
    /// In the order the mutations began; never empty.
    let layers: [Layer]

    init(confirmed: Entity?, layers: [Layer]) {
        self.confirmed = confirmed
        self.layers = layers
    }

    /// What observers see: each layer applied, in order, to what lies beneath it. Runs the applications' updates:
    /// call it outside the resource's lock.
    func visible() -> Entity? {
        layers.reduce(confirmed) { beneath, layer in layer.apply(beneath, layer.began) }
    }

    /// The same layers over `confirmed`.
    func confirming(_ confirmed: Entity?) -> OptimisticLayers {
        OptimisticLayers(confirmed: confirmed, layers: layers)
    }

    /// These layers with `layer` on top.
    func adding(_ layer: Layer) -> OptimisticLayers {
        OptimisticLayers(confirmed: confirmed, layers: layers + [layer])
    }

    /// These layers without those `isRemoved` picks; nil when none is left or none was picked (`removed` says which).
    func removing(where isRemoved: (Layer) -> Bool) -> (remaining: OptimisticLayers?, removed: Bool) {
        let remaining = layers.filter { !isRemoved($0) }
        guard remaining.count < layers.count else { return (self, false) }
        return (remaining.isEmpty ? nil : OptimisticLayers(confirmed: confirmed, layers: remaining), true)
    }

    /// These layers with the one numbered `id` marked to go with a load begun at `invalidations` or later.
    func removingWithLoad(_ id: UInt64, from invalidations: UInt64) -> OptimisticLayers {
        OptimisticLayers(
            confirmed: confirmed,
            layers: layers.map { layer in
                var layer = layer
                if layer.id == id { layer.removedByLoadFrom = invalidations }
                return layer
            })
    }
}
