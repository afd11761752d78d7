import DeliveryKit
import MemoryPressureKit
import Observation
import PipelineKit
import ResourceKit
import TetherConcurrency
import TetherJSON
import TetherObservation

/// Scenario 2 — Siesta's ownership rules: screens (owner objects) open and close, observing resources with the
/// three flavours, or holding a `ResourceModel` per resource, as a SwiftUI view would; observers go with their
/// owners, shared resources are loaded once, and memory pressure lets go of exactly the resources nobody observes or
/// holds.
struct OwnershipScenario {
    struct Result: Sendable {
        var screens = 0
        var flavours: [String: Int] = [:]
        var aliveAfterOpening = 0
        var observedAfterOpening = 0
        var listLoadsServed: [String: Int] = [:]
        var closedScreens = 0
        var observersReleased = 0
        var observedAfterClosing = 0
        var evicted = 0
        var aliveAfterPressure = 0
        /// The model screens' models, those showing their resource's content once loaded, and those released with
        /// their screens.
        var models = 0
        var modelsShowingContent = 0
        var modelsReleased = 0
        var modelsClosed = 0
    }

    let pipeline: AssembledPipeline
    let service: ResourceKit.Service
    let settings: SampleSettings
    let server: DemoServer?
    let console: Console

    /// A screen: the owner of everything it observes. It is itself the observer of its list when it observes
    /// with the self-owned flavour.
    final class Screen: ResourceObserver {
        let name: String
        let resources: [Resource]
        let activity: Activity
        /// A model screen's models: what its view reads. Nil for the other flavours.
        let models: Models?

        /// A model screen's models: its store's list, typed by the pipeline's `inventory` stage, and its item.
        struct Models: Sendable {
            let list: ResourceModel<[InventoryItem]>
            let item: ResourceModel<JSONValue>

            /// How many show their resource's content, loaded, with no error.
            var showingContent: Int {
                (list.content != nil && !list.isLoading && list.error == nil ? 1 : 0)
                    + (item.content != nil && !item.isLoading && item.error == nil ? 1 : 0)
            }
        }

        /// Screens alive now, across every run (the soak checks it returns to zero).
        static let alive = LockedValue(0)

        /// A screen of `resources` (its store's list, then its item); with `models`, one that shows each through a
        /// `ResourceModel` delivering with `delivery`, as a view holding them would.
        init(
            name: String, resources: [Resource], activity: Activity, models: Bool = false,
            delivery: (any DeliveryPolicy)? = nil
        ) {
            self.name = name
            self.resources = resources
            self.activity = activity
            self.models =
                models
                ? Models(
                    list: ResourceModel(resources[0], loadsOnAccess: false, delivery: delivery),
                    item: ResourceModel(resources[1], loadsOnAccess: false, delivery: delivery)) : nil
            Self.alive.withLock { $0 += 1 }
            if let models = self.models { Self.render(models, activity: activity) }
        }

        deinit { Self.alive.withLock { $0 -= 1 } }

        func resourceChanged(_ resource: Resource, event: ResourceEvent) {
            activity.heard()
        }

        /// What a view holding `models` does: reads what it shows, and renders again when any of it changes.
        private static func render(_ models: Models, activity: Activity) {
            withObservationTracking {
                _ = (models.list.content?.count, models.list.isLoading, models.list.error)
                _ = (models.item.content, models.item.isLoading, models.item.error)
            } onChange: {
                activity.heard()
            }
        }
    }

    /// An observer held by its owner (the second flavour); counts its own deallocation.
    final class ItemsObserver: ResourceObserver {
        let released: LockedValue<Int>
        let activity: Activity

        /// Owner-held observers alive now, across every run.
        static let alive = LockedValue(0)

        init(released: LockedValue<Int>, activity: Activity) {
            self.released = released
            self.activity = activity
            Self.alive.withLock { $0 += 1 }
        }

        deinit {
            released.withLock { $0 += 1 }
            Self.alive.withLock { $0 -= 1 }
        }

        func resourceChanged(_ resource: Resource, event: ResourceEvent) {
            activity.heard()
        }
    }

    /// When any observer last heard an event: observers deliver on queues of their own, so the screens have
    /// settled once nothing has been heard for a while.
    final class Activity: Sendable {
        private let last = LockedValue(ContinuousClock.now)

        func heard() {
            last.withLock { $0 = .now }
        }

        func settle(quiet: Duration = .milliseconds(150), atMost: Duration = .seconds(5)) async {
            let deadline = ContinuousClock.now + atMost
            while ContinuousClock.now - last.withLock({ $0 }) < quiet, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    func run() async -> Result {
        var result = Result()
        let released = LockedValue(0)
        let activity = Activity()
        let flavours = ["self-owned", "owner-held", "closure", "model"]
        var screens: [Screen] = []
        var loads: [Request] = []
        let servedBefore = Dictionary(
            uniqueKeysWithValues: Inventory.stores.map { ($0, server?.served(to: "/stores/\($0)/items") ?? 0) })
        for index in 0..<settings.screens {
            let store = Inventory.stores[index % Inventory.stores.count]
            let list = service.resource("/stores/\(store)/items")
            let own = service.resource("/stores/\(store)/items/\(store)-\(index % Inventory.products.count)")
            let flavour = flavours[index % flavours.count]
            let screen = Screen(
                name: "screen \(index + 1)", resources: [list, own], activity: activity, models: flavour == "model",
                delivery: pipeline.resourceDelivery.resourcePolicy)
            result.flavours[flavour, default: 0] += 1
            for resource in [list, own] {
                switch flavour {
                case "self-owned": resource.addObserver(screen, delivery: pipeline.resourceDelivery.resourcePolicy)
                case "owner-held":
                    resource.addObserver(
                        ItemsObserver(released: released, activity: activity), owner: screen,
                        delivery: pipeline.resourceDelivery.resourcePolicy)
                case "model": break  // the screen's models observe it
                default:
                    resource.addObserver(owner: screen, delivery: pipeline.resourceDelivery.resourcePolicy) { _, _ in
                        activity.heard()
                    }
                }
                if let load = resource.loadIfNeeded() { loads.append(load) }
            }
            for detail in 0..<settings.detailsPerScreen {
                let item = (index + detail + 1) % Inventory.products.count
                if let load = service.resource("/stores/\(store)/items/\(store)-\(item)").loadIfNeeded() {
                    loads.append(load)
                }
            }
            screens.append(screen)
            console.progress("opening screens", done: index + 1, total: settings.screens)
        }
        for load in loads { _ = await load.outcome }
        loads.removeAll()  // a finished request no longer matters; holding it would hold its resource
        await activity.settle()  // every observer has heard the outcome on its own queue
        console.endProgress()
        result.screens = screens.count
        result.models = screens.filter { $0.models != nil }.count * 2
        result.modelsShowingContent = screens.compactMap(\.models).map(\.showingContent).reduce(0, +)
        result.aliveAfterOpening = service.cachedResourceCount
        result.observedAfterOpening = Set(screens.flatMap { $0.resources.map(ObjectIdentifier.init) }).count
        if let server {
            for store in Inventory.stores {
                result.listLoadsServed[store] = server.served(to: "/stores/\(store)/items") - (servedBefore[store] ?? 0)
            }
        }
        console.line(
            "\(screens.count) screens open ("
                + flavours.map { "\(result.flavours[$0] ?? 0) \($0)" }.joined(separator: ", ")
                + "): \(result.aliveAfterOpening) resources alive, \(result.observedAfterOpening) observed")
        if result.models > 0 {
            console.check(
                result.modelsShowingContent == result.models,
                "the model screens' \(result.models) ResourceModels show their resources' content, loaded, with no error"
            )
        }
        let sharing = settings.screens / Inventory.stores.count
        if server != nil {
            console.check(
                result.listLoadsServed.values.allSatisfy { $0 <= 1 },
                "each store's list was fetched at most once (not at all when the cache held it fresh), though \(sharing)+ screens asked for it at the same time"
            )
        }

        // Close every other screen: dropping the owner is all it takes.
        let closing = screens.indices.filter { $0 % 2 == 1 }
        let closedResources = Set(closing.flatMap { screens[$0].resources.map(ObjectIdentifier.init) })
        let ownerHeldClosing = closing.filter { flavours[$0 % flavours.count] == "owner-held" }.count * 2
        let closingModels = closing.compactMap { screens[$0].models }.map(WeakModels.init)
        result.modelsClosed = closingModels.count * 2
        screens = screens.indices.filter { $0 % 2 == 0 }.map { screens[$0] }
        result.closedScreens = closing.count
        let keptResources = Set(screens.flatMap { $0.resources.map(ObjectIdentifier.init) })
        console.line("\(closing.count) screens closed, with no removeObservers call")

        // Memory pressure: every service lets go of what nobody observes or holds.
        result.evicted = pipeline.simulateMemoryPressure(reason: "the sample's simulated pressure event")
        // Observers delivered on queues of their own drop their last references when their queue runs its last
        // job, about a millisecond later: wait for that (at most 2 s) before counting.
        let deadline = ContinuousClock.now + .seconds(2)
        while service.cachedResourceCount > keptResources.count || released.withLock({ $0 }) < ownerHeldClosing,
            ContinuousClock.now < deadline
        {
            try? await Task.sleep(for: .milliseconds(1))
        }
        result.aliveAfterPressure = service.cachedResourceCount
        result.observedAfterClosing = screens.flatMap(\.resources).filter(\.hasObservers).count
        result.observersReleased = released.withLock { $0 }
        result.modelsReleased = closingModels.map(\.released).reduce(0, +)
        console.line(
            "memory pressure: \(result.evicted) unused resources let go; \(result.aliveAfterPressure) alive, all observed by open screens"
        )
        console.check(
            result.aliveAfterPressure == keptResources.count,
            "after pressure exactly the \(keptResources.count) resources the open screens observe are alive")
        console.check(
            result.observersReleased == ownerHeldClosing,
            "the closed screens' \(ownerHeldClosing) owner-held observers were deallocated, swept with their owners")
        console.check(
            result.modelsReleased == result.modelsClosed,
            "the closed screens' \(result.modelsClosed) ResourceModels were released with them, and their observations ended"
        )
        console.check(
            result.evicted == result.aliveAfterOpening - keptResources.count,
            "every resource only the closed screens observed (\(closedResources.subtracting(keptResources).count)), and every unobserved detail, was let go"
        )
        withExtendedLifetime(screens) {}
        return result
    }
}

/// A screen's models, held weakly: whether they outlived it.
private struct WeakModels {
    weak var list: ResourceModel<[InventoryItem]>?
    weak var item: ResourceModel<JSONValue>?

    init(_ models: OwnershipScenario.Screen.Models) {
        list = models.list
        item = models.item
    }

    /// How many were released.
    var released: Int { (list == nil ? 1 : 0) + (item == nil ? 1 : 0) }
}
