// The examples of Docs/MirrorKit.md, compiled (see OwnershipKitSnippets.swift).
import Foundation
import LiveQueryKit
import MirrorKit
import ResourceKit
import SQLiteAdapter

enum MirrorKitSnippets {
    static func showStatus(updated: Date?, failing: String?) {}

    static func mirror(service: Service, dataDirectory: String) async throws {
        // snippet: MirrorKit.mirror
        let store = Store(try SQLiteDocumentStore(path: "\(dataDirectory)/documents.sqlite"))
        let items = store.collection("items")
        try await items.createIndex(["store_id", "name"])
        let mirror = try service.resource("/stores/abc/items").mirror(
            into: items, id: "id", scope: "store_id == 'abc'")
        // end snippet

        // snippet: MirrorKit.query
        let cheap = try items.find("store_id == 'abc' && price < 10").sort("name")
            .observeLocalWithNextSignal { documents, event, signalNext in
                render(documents)
                signalNext()
            }
        // end snippet

        // snippet: MirrorKit.state
        let status = try mirror.state.query.observeLocal { documents, _ in
            let state = documents.first.flatMap(MirrorState.init)
            showStatus(updated: state?.syncedAt, failing: state?.error)
        }
        // end snippet

        // snippet: MirrorKit.detail
        let detail = try service.resource("/items/pear").mirror(into: items, id: "id")
        let pear = try items.findByID("pear").query.observeLocal { documents, _ in render(documents) }
        // end snippet

        // snippet: MirrorKit.path
        let page = try service.resource("/search").withParam("q", "fig").mirror(
            into: store.collection("results"), id: "key", path: "data.items")
        // end snippet
        _ = (cheap, status, detail, pear, page)

        // snippet: MirrorKit.stop
        await mirror.stop()  // or let it go: the mirror owns its observer
        // end snippet
    }
}
