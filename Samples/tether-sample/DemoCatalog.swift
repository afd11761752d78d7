import Foundation
import TetherConcurrency

/// The demo API's catalog, which changes behind the client's back: `GET /catalog/{store}` answers the store's items
/// as they are now, with an ETag, and ``change(_:)`` changes them on the server's side — the way another user's edits
/// or a price update reach a real API, with nothing sent by the sample's resources.
///
/// Every run starts from the same catalog, and each change is the same on every run (it depends only on how many
/// changes the store has had), so two runs show the same rounds.
final class DemoCatalog: Sendable {
    /// What one change did to a store's catalog.
    struct Change: Sendable, CustomStringConvertible {
        var repriced = 0
        var removed = 0
        var added = 0

        var description: String { "\(repriced) repriced, \(removed) removed, \(added) added" }
    }

    private struct State {
        var items: [String: [InventoryItem]]
        var changes: [String: Int] = [:]
    }

    private static let itemsPerStore = 24
    private let state: LockedValue<State>

    init() {
        var items: [String: [InventoryItem]] = [:]
        for (seed, store) in Inventory.stores.enumerated() {
            items[store] = (0..<Self.itemsPerStore).map { index in
                Self.item(store: store, number: index, seed: seed)
            }
        }
        state = LockedValue(State(items: items))
    }

    /// The items of `store` as the server holds them now, in the order it answers them.
    func items(in store: String) -> [InventoryItem] {
        state.withLock { $0.items[store] ?? [] }
    }

    /// The body for `path` when it is `/catalog/{store}` of a known store, else nil.
    func body(for path: String) -> Data? {
        let segments = path.split(separator: "/").map(String.init)
        guard segments.count == 2, segments[0] == "catalog", Inventory.stores.contains(segments[1]) else { return nil }
        return Inventory.json(items(in: segments[1]))
    }

    /// Changes `store`'s catalog on the server: three items get a new price (some cross 10, in and out of a cheap
    /// items query), one item goes and one new item comes.
    @discardableResult
    func change(_ store: String) -> Change {
        state.withLock { state in
            var items = state.items[store] ?? []
            let round = state.changes[store, default: 0] + 1
            state.changes[store] = round
            var change = Change()
            guard !items.isEmpty else { return change }
            for step in [0, 3, 7] {
                let index = (round * 5 + step) % items.count
                items[index].price = Double((Int(items[index].price * 100) + round * 737) % 1_800 + 100) / 100
                change.repriced += 1
            }
            if items.count > Self.itemsPerStore / 2 {
                items.remove(at: (round * 3) % items.count)
                change.removed += 1
            }
            let seed = Inventory.stores.firstIndex(of: store) ?? 0
            items.append(Self.item(store: store, number: Self.itemsPerStore + round, seed: seed))
            change.added += 1
            state.items[store] = items
            return change
        }
    }

    private static func item(store: String, number: Int, seed: Int) -> InventoryItem {
        let product = Inventory.products[number % Inventory.products.count]
        return InventoryItem(
            id: "\(store)-c\(number)", storeID: store, name: "\(product) \(number / Inventory.products.count + 1)",
            quantity: (number * 11 + seed * 5) % 30, price: Double((number * 389 + seed * 97) % 1_800 + 100) / 100)
    }
}
