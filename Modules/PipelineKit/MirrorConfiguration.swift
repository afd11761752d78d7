import DocumentStoreKit
package import LiveQueryKit
package import MirrorKit
package import ResourceKit

/// A resource mirrored into a collection (`mirrors:`; see MirrorKit), checked when the configuration is loaded: its
/// service, its collection name, its id field and its scope (an error points at the column).
///
/// ```yaml
/// mirrors:
///   - name: abc-items
///     service: demo                 # may be left out when there is one service
///     resource: /stores/abc/items
///     collection: items
///     id: id                        # the field whose value is a document's _id (default _id)
///     scope: store_id == 'abc'      # the documents of the collection that are this mirror's (default: all)
///     path: data.items              # where the documents are in the response (default: the response itself)
/// ```
package struct MirrorConfiguration: Decodable, Sendable {
    /// The name the application finds it by, and its state's `_id`.
    package var name: String
    /// The service; nil for the only one.
    package var service: String?
    /// The resource's path (or URL), as `service.resource(_:)` takes it.
    package var resource: String
    /// The collection written.
    package var collection: String
    /// The id field (a dotted path).
    package var id: String
    /// The scope; nil for the whole collection.
    package var scope: String?
    /// Where the documents are in the response.
    package var path: String?

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, service, resource, collection, id, scope, path
    }

    /// Decodes and checks a mirror.
    package init(from decoder: any Decoder) throws {
        let settings = try decoder.settings(CodingKeys.self)
        name = try settings.require(.name, as: String.self) ?? ""
        service = try settings.decode(.service, as: String.self)
        resource = try settings.require(.resource, as: String.self) ?? ""
        collection = try settings.collectionName(.collection)
        id = try settings.decode(.id, default: "_id")
        if id.split(separator: ".", omittingEmptySubsequences: true).isEmpty {
            try settings.invalid(.id, "must name a field, such as id or _id (found '\(id)')")
        }
        scope = try settings.decode(.scope, as: String.self)
        if let scope {
            do {
                _ = try DocumentPredicate(query: scope, args: [:])
            } catch {
                try settings.invalid(
                    .scope, "\(error.message) (at column \(error.column ?? 1) of the scope)", column: error.column)
            }
        }
        path = try settings.decode(.path, as: String.self)
    }

    /// Starts the mirror on `service`'s resource, into `store`'s collection.
    package func start(service: Service, store: Store) throws(MirrorError) -> ResourceMirror {
        try service.resource(resource).mirror(
            into: store.collection(collection), id: id, scope: scope, path: path, name: name)
    }
}
