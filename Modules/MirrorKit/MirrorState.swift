public import Foundation
public import LiveQueryKit
public import TetherJSON

/// What a mirror last did: kept as a document in the store, in the collection ``collection`` with the mirror's name
/// as its `_id`, and written in the same transaction as the documents. A screen observes it with a live query beside
/// the data — "offline, last updated 5 min ago" — with no network and no mirror running:
///
/// ```swift
/// let status = try mirror.state.query.observeLocal { documents, _ in
///     guard let state = documents.first.flatMap(MirrorState.init) else { return }
///     show(updated: state.syncedAt, failing: state.error)
/// }
/// ```
public struct MirrorState: Sendable, Hashable {
    /// The collection that holds every mirror's state.
    public static let collection = "tether_mirrors"

    /// The mirror's name (the document's `_id`).
    public var name: String
    /// The resource's URL.
    public var url: String
    /// The collection the mirror writes.
    public var mirroredCollection: String
    /// The mirror's scope, when it has one.
    public var scope: String?
    /// When the data last written was received (the resource's `Entity.timestamp`); nil before the first sync.
    public var syncedAt: Date?
    /// The ETag the data last written came with.
    public var etag: String?
    /// How many documents the last sync held.
    public var documentCount: Int
    /// Why the last load or sync since then failed (the resource's error, or a ``MirrorError``); nil when the last
    /// one succeeded.
    public var error: String?
    /// When ``error`` happened.
    public var errorAt: Date?

    /// Makes a state.
    public init(
        name: String, url: String, mirroredCollection: String, scope: String? = nil, syncedAt: Date? = nil,
        etag: String? = nil, documentCount: Int = 0, error: String? = nil, errorAt: Date? = nil
    ) {
        self.name = name
        self.url = url
        self.mirroredCollection = mirroredCollection
        self.scope = scope
        self.syncedAt = syncedAt
        self.etag = etag
        self.documentCount = documentCount
        self.error = error
        self.errorAt = errorAt
    }

    /// The state a document of ``collection`` holds; nil for a document that is not one.
    public init?(_ document: Document) {
        let value = document.value
        guard let url = value["url"]?.stringValue, let collection = value["collection"]?.stringValue else {
            return nil
        }
        self.init(
            name: document.id, url: url, mirroredCollection: collection, scope: value["scope"]?.stringValue,
            syncedAt: value["synced_at"]?.doubleValue.map(Date.init(timeIntervalSince1970:)),
            etag: value["etag"]?.stringValue, documentCount: value["documents"]?.intValue ?? 0,
            error: value["error"]?.stringValue,
            errorAt: value["error_at"]?.doubleValue.map(Date.init(timeIntervalSince1970:)))
    }

    /// The document the store keeps: `_id`, `url`, `collection`, `scope`, `synced_at` and `error_at` (seconds since
    /// 1970), `etag`, `documents`, `error`.
    public var document: JSONValue {
        var members: [String: JSONValue] = [
            "_id": .string(name), "url": .string(url), "collection": .string(mirroredCollection),
            "documents": .number(Double(documentCount)),
        ]
        if let scope { members["scope"] = .string(scope) }
        if let syncedAt { members["synced_at"] = .number(syncedAt.timeIntervalSince1970) }
        if let etag { members["etag"] = .string(etag) }
        if let error { members["error"] = .string(error) }
        if let errorAt { members["error_at"] = .number(errorAt.timeIntervalSince1970) }
        return .object(members)
    }
}
