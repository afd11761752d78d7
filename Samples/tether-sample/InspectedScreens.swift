import LiveQueryKit
import PipelineKit
import ResourceKit

/// With `--inspect`, what the sample keeps on show once its scenarios are done, until Ctrl-C: two screens observing
/// the store's item list (one through a closure, one itself), and the configured live query, each owned by its
/// screen — so the inspector's page has owners, observers and a live query to show.
final class InspectedScreen: ResourceObserver, Sendable {
    func resourceChanged(_ resource: Resource, event: ResourceEvent) {}
}

struct InspectedScreens: Sendable {
    let screens: [InspectedScreen]

    /// Opens the screens on `service` and `pipeline`'s live query `liveQuery`.
    init(pipeline: AssembledPipeline, service: Service, liveQuery: String) throws {
        screens = [InspectedScreen(), InspectedScreen()]
        let list = service.resource("/stores/abc123/items")
        list.addObserver(screens[0])
        list.addObserver(owner: screens[1]) { _, _ in }
        list.loadIfNeeded()
        let configured = try pipeline.liveQuery(named: liveQuery)
        try configured.query.observeLocal(owner: screens[0]) { _, _ in }
    }
}
