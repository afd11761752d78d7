import Foundation

/// The demo API's data: a few stores' inventories, the same on every run (so ETags survive restarts).
struct InventoryItem: Codable, Sendable, Equatable {
    var id: String
    var storeID: String
    var name: String
    var quantity: Int
    var price: Double

    enum CodingKeys: String, CodingKey {
        case id
        case storeID = "store_id"
        case name, quantity, price
    }
}

enum Inventory {
    static let stores = ["abc123", "def456", "ghi789"]
    static let products = ["apples", "pears", "plums", "figs", "dates", "limes", "kiwis", "mangos", "grapes", "melons"]

    /// The items of `store`, deterministic.
    static func items(in store: String) -> [InventoryItem] {
        let seed = stores.firstIndex(of: store) ?? store.count
        return products.enumerated().map { index, product in
            InventoryItem(
                id: "\(store)-\(index)", storeID: store, name: product, quantity: (index * 7 + seed * 3) % 40,
                price: Double((index + 1) * (seed + 2)) / 4)
        }
    }

    /// Stable JSON for `value` (sorted keys), so equal data gives equal bytes and equal ETags.
    static func json<Value: Encodable>(_ value: Value) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)) ?? Data("[]".utf8)
    }

    /// A strong ETag for `body` (FNV-1a, 64 bits).
    static func etag(for body: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "\"" + String(hash, radix: 16) + "\""
    }
}
