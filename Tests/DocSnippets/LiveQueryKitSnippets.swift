// The examples of Docs/LiveQueryKit.md, compiled (see OwnershipKitSnippets.swift).
import Dispatch
import LiveQueryKit
import Logging
import SQLiteAdapter
import TetherJSON

/// Draws a result; calls `done` once it no longer holds the documents.
final class ItemsRenderer: Sendable {
    func apply(_ documents: [Document], _ event: LiveQueryEvent, done: @escaping @Sendable () -> Void) {
        DispatchQueue.global().async { done() }
    }
}

func render(_ documents: [Document], _ event: LiveQueryEvent) {}
func render(_ documents: [Document]) {}

enum LiveQueryKitSnippets {
    static func makeStore(dataDirectory: String) throws -> (Store, Store) {
        // snippet: LiveQueryKit.make-store
        let store = Store(try SQLiteDocumentStore(path: "\(dataDirectory)/documents.sqlite"))
        let scratch = Store.inMemory()
        // end snippet
        return (store, scratch)
    }

    static func createIndex(store: Store) async throws {
        // snippet: LiveQueryKit.create-index
        try await store.collection("items").createIndex(["store_id", "name"])
        // Served by it: `store_id == $args.sid`, sorted by name, limited — and the live queries' re-evaluations.
        let firstPage = store.collection("items").find("store_id == $args.sid", args: ["sid": "abc123"])
            .sort("name").limit(100)
        // end snippet
        _ = firstPage
    }

    static func write(store: Store) async throws -> (StoreCollection, String) {
        // snippet: LiveQueryKit.write
        let items = store.collection("items")
        try await items.upsert(["_id": "a1", "store_id": "abc123", "name": "Pear", "price": 1.2])
        let id = try await items.upsert(["store_id": "abc123", "name": "Fig"])  // no _id: a UUID is generated
        try await items.find("price > 10").update { $0 = ["_id": $0["_id"]!, "name": $0["name"]!, "price": 10] }
        try await store.write { transaction in
            try transaction.collection("orders").upsert(["_id": "o1", "item": "a1"])
            try transaction.collection("items").remove(id: "a1")
        }
        // end snippet
        return (items, id)
    }

    static func observe(items: StoreCollection) throws -> LiveQuery {
        // snippet: LiveQueryKit.observe
        let liveQuery = try items.find("store_id == $args.sid", args: ["sid": "abc123"])
            .sort("name")
            .limit(50)
            .observeLocal { documents, event in
                render(documents, event)
            }
        // end snippet
        return liveQuery
    }

    @MainActor
    final class ItemsModel {
        var rows: [String] = []
    }

    static func isolated(items: StoreCollection, model: ItemsModel) throws -> LiveQuery {
        // snippet: LiveQueryKit.isolated
        let liveQuery = try items.find("store_id == 'abc123'").sort("name").observeLocalAsync {
            @MainActor documents, _ in
            model.rows = documents.map(\.id)
        }
        // end snippet
        return liveQuery
    }

    static func nextSignalOnQueue(items: StoreCollection, renderer: ItemsRenderer) throws -> LiveQuery {
        // snippet: LiveQueryKit.next-signal-on-queue
        let renderQueue = DispatchQueue(label: "render")
        let liveQuery = try items.find("store_id == $args.sid", args: ["sid": "abc123"])
            .observeLocalWithNextSignal(deliverOn: renderQueue) { documents, event, signalNext in
                renderer.apply(documents, event) {  // asynchronous work that holds the documents
                    signalNext()  // done: the latest result may come now, if it changed
                }
            }
        // end snippet
        return liveQuery
    }

    static func onError(items: StoreCollection, log: Logger) throws -> LiveQuery {
        // snippet: LiveQueryKit.on-error
        let liveQuery = try items.find("store_id == 'abc123'").observeLocal(onError: { error in
            log.warning("items unavailable: \(error)")  // the handler keeps its last good result
        }) { documents, event in
            render(documents, event)
        }
        // end snippet
        return liveQuery
    }

    static func waitForLiveQueries(store: Store, items: StoreCollection) async throws {
        // snippet: LiveQueryKit.wait
        try await items.upsert(["_id": "a1", "store_id": "abc123", "name": "Pear"])
        // Through store.lastCommit: every observer of "items" has been offered the pear.
        await store.waitForLiveQueries()
        // end snippet
    }

    static func followOtherProcesses() async throws {
        // snippet: LiveQueryKit.follow
        let documents = try SQLiteDocumentStore(path: "shared.sqlite")
        let store = Store(documents)
        let liveQuery = try store.collection("items").findAll().observeLocal { documents, _ in render(documents) }
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await documents.followOtherProcesses() }  // until the group is cancelled
            // … other processes' commits reach liveQuery in commit order, with the same back pressure
        }
        await liveQuery.stop()
        // end snippet
    }
}

final class ItemsScreen: Sendable {
    let items: StoreCollection

    init(items: StoreCollection) {
        self.items = items
    }

    func show(_ documents: [Document]) {}

    func observe() throws {
        // snippet: LiveQueryKit.owner
        try items.findAll().observeLocal(owner: self) { [weak self] documents, _ in self?.show(documents) }
        // end snippet
    }
}
