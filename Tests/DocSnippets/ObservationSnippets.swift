// The examples of Docs/Observation.md, compiled (see OwnershipKitSnippets.swift). The SwiftUI one is compiled only
// where SwiftUI exists: Linux has none.
import LiveQueryKit
import Observation
import ResourceKit
import TetherJSON
import TetherObservation

#if canImport(SwiftUI)
import SwiftUI
#endif

enum ObservationSnippets {
    static func render(_ content: JSONValue?, loading: Bool, error: ResourceError?) {}
    static func render(_ documents: [Document]) {}
    static func scheduleRender() {}

    static func resourceModel(service: Service) async {
        // snippet: Observation.resource
        let items = ResourceModel<JSONValue>(service.resource("/stores/abc/items"))
        withObservationTracking {
            render(items.content, loading: items.isLoading, error: items.error)  // reading content loads it
        } onChange: {
            scheduleRender()
        }
        // end snippet

        // snippet: Observation.repoint
        items.resource = service.resource("/stores/def/items")  // the old resource's observer goes at once
        await items.show(service.resource("/stores/ghi/items"))  // the same, from a task
        // end snippet
    }

    static func liveQueryModel(store: Store) async throws {
        // snippet: Observation.live-query
        let cheap = try LiveQueryModel(
            store.collection("items").find("store_id == 'abc' && price < 10").sort("price"))
        for await documents in Observations({ cheap.documents }) {
            render(documents)  // each result once: the model takes the next only after this read
        }
        // end snippet
    }

    static func executors(store: Store) throws {
        // snippet: Observation.executors
        let query = store.collection("items").find("store_id == 'abc'")
        let onQueue = try LiveQueryModel(query, deliverOn: .serialQueue(label: "items"))  // a queue you name
        let eachResult = try LiveQueryModel(query, pacing: .immediately)  // observeLocal's pacing: no read needed
        // end snippet
        _ = (onQueue, eachResult)
    }

    #if canImport(SwiftUI)
    // snippet: Observation.swiftui
    struct ItemsView: View {
        @State private var items: ResourceModel<JSONValue>
        @State private var cheap: LiveQueryModel

        init(service: Service, store: Store) throws {
            items = ResourceModel(service.resource("/stores/abc/items"))
            cheap = try LiveQueryModel(store.collection("items").find("price < 10").sort("price"))
        }

        var body: some View {
            VStack {
                ResourceStatusView(items) { content in Text("\(content.arrayValue?.count ?? 0) items") }
                List(cheap.documents) { item in Text(item.string("name") ?? "") }
            }
        }
    }
    // end snippet
    #endif
}
