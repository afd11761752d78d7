import DocumentStoreKit
package import LiveQueryKit
import PersistenceKit
package import TetherJSON

/// A live query the application observes (`live_queries:`), checked when the configuration is loaded: its
/// collection name, its query text (an error points at the column) and its delivery.
///
/// ```yaml
/// live_queries:
///   - name: abc-items
///     collection: items
///     query: store_id == $args.store && quantity > 0
///     args: { store: abc123 }
///     sort: [name, -price]          # a leading - sorts descending
///     limit: 100
///     delivery: { type: next-signal }
/// ```
package struct LiveQueryConfiguration: Decodable, Sendable {
    /// The name the application finds it by.
    package var name: String
    /// The collection.
    package var collection: String
    /// The query; nil observes the whole collection.
    package var query: String?
    /// Values for `$args.name` in the query.
    package var args: [String: JSONValue]
    /// Sort keys: a path, or `-path` for descending.
    package var sort: [String]
    /// At most this many documents.
    package var limit: Int?
    /// Skip this many first.
    package var offset: Int?
    /// How it is delivered; nil for the pipeline's default.
    package var delivery: PluginChoice<ObservationDelivery>?

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, collection, query, args, sort, limit, offset, delivery
    }

    /// Decodes and checks a live query.
    package init(from decoder: any Decoder) throws {
        let settings = try decoder.settings(CodingKeys.self)
        name = try settings.require(.name, as: String.self) ?? ""
        collection = try settings.collectionName(.collection)
        query = try settings.decode(.query, as: String.self)
        args = try settings.decode(.args, default: [:])
        if let query {
            do {
                _ = try DocumentPredicate(query: query, args: args)
            } catch {
                try settings.invalid(
                    .query, "\(error.message) (at column \(error.column ?? 1) of the query)", column: error.column)
            }
        }
        sort = try settings.decode(.sort, default: [])
        // Checked here, before anything starts, not when the query is first observed.
        for (index, key) in sort.enumerated() {
            let path = key.hasPrefix("-") ? String(key.dropFirst()) : key
            do {
                _ = try DocumentPath(path)
            } catch {
                try settings.invalid(
                    at: [.key("sort"), .index(index)],
                    "'\(key)' is not a sort field path: \(error.message) (write a path such as name or address.city; a leading - sorts descending)"
                )
            }
        }
        limit = try settings.decode(.limit, as: Int.self)
        if let limit, limit < 1 { try settings.invalid(.limit, "must be at least 1 (found \(limit))") }
        offset = try settings.decode(.offset, as: Int.self)
        if let offset, offset < 0 { try settings.invalid(.offset, "must be zero or more (found \(offset))") }
        delivery = try settings.decode(.delivery, as: PluginChoice<ObservationDelivery>.self)
    }

    /// The query on `store`, sorted, limited and offset as configured.
    package func pendingQuery(on store: Store) -> PendingQuery {
        var pending =
            query.map { store.collection(collection).find($0, args: args) } ?? store.collection(collection).findAll()
        for key in sort {
            pending =
                key.hasPrefix("-")
                ? pending.sort(String(key.dropFirst()), direction: .descending) : pending.sort(key)
        }
        if let limit { pending = pending.limit(limit) }
        if let offset { pending = pending.offset(offset) }
        return pending
    }
}
