public import PersistenceKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One durable mutation as an outbox keeps it: the request, what it shows while pending, and what happens when it
/// succeeds. Its ``key`` is the mutation's idempotency key, sent with every attempt, and names it everywhere.
///
/// Storage keeps ``sequence``, ``key``, ``lane``, ``body`` and ``failure`` as they are, and the rest as the JSON
/// text ``details`` makes, under the format number ``format``: an outbox written by a newer version that changed
/// the format is left alone rather than misread.
public struct OutboxEntry: Sendable, Hashable {
    /// One header field.
    public struct Header: Sendable, Hashable, Codable {
        /// The field name.
        public var name: String
        /// The value.
        public var value: String

        /// Makes a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The format of ``details`` this version writes and reads.
    public static let format = 1

    /// Given by the outbox when the entry is written; 0 before.
    public var sequence: Int64
    /// The idempotency key: unique in the outbox.
    public var key: String
    /// What orders the entry: entries of one lane are sent one at a time, in sequence order. The resource's URL, or
    /// one lane for the whole service.
    public var lane: String
    /// The method, as sent: `POST`, `PUT`…
    public var method: String
    /// The resource's URL.
    public var url: String
    /// The mutation's own header fields, the idempotency key among them; the configuration's are added when sent.
    public var headers: [Header]
    /// The body, if there is one.
    public var body: Data?
    /// The name of the optimistic update it shows while pending (see `Service.defineOptimisticUpdate`), if any.
    public var optimisticUpdate: String?
    /// Whether the response becomes the resource's data on success, rather than the resource reloading.
    public var usesResponse: Bool
    /// The configuration patterns of the resources invalidated on success.
    public var invalidates: [String]
    /// When the mutation was made.
    public var enqueued: Date
    /// Why the server refused it, for an entry in the failed list.
    public var failure: String?

    /// Makes an entry, not yet written (``sequence`` 0).
    public init(
        key: String, lane: String, method: String, url: String, headers: [Header], body: Data?,
        optimisticUpdate: String?, usesResponse: Bool, invalidates: [String], enqueued: Date
    ) {
        self.sequence = 0
        self.key = key
        self.lane = lane
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.optimisticUpdate = optimisticUpdate
        self.usesResponse = usesResponse
        self.invalidates = invalidates
        self.enqueued = enqueued
        self.failure = nil
    }

    /// What storage keeps as text: every field but ``sequence``, ``key``, ``lane``, ``body`` and ``failure``, as
    /// JSON in format ``format``.
    public var details: String {
        let details = Details(
            method: method, url: url, headers: headers, optimisticUpdate: optimisticUpdate,
            usesResponse: usesResponse, invalidates: invalidates, enqueued: enqueued.timeIntervalSince1970)
        // Encoding strings, booleans and numbers cannot fail.
        let data = (try? Self.encoder.encode(details)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// An entry read back from storage: the stored columns, and ``details`` text in `format`.
    ///
    /// - Throws: `PersistenceError` (`invalidDocument`, naming the key) when
    ///   `format` is not ``format`` or the text does not read as one.
    public init(
        sequence: Int64, key: String, lane: String, body: Data?, failure: String?, details: String, format: Int
    ) throws(PersistenceError) {
        guard format == Self.format else {
            throw PersistenceError(
                .invalidDocument,
                "the outbox entry is in format \(format); this version reads format \(Self.format)", id: key)
        }
        let decoded: Details
        do {
            decoded = try JSONDecoder().decode(Details.self, from: Data(details.utf8))
        } catch {
            throw PersistenceError(
                .invalidDocument, "the outbox entry's details do not read: \(error)", id: key, cause: error)
        }
        self.init(
            key: key, lane: lane, method: decoded.method, url: decoded.url, headers: decoded.headers, body: body,
            optimisticUpdate: decoded.optimisticUpdate, usesResponse: decoded.usesResponse,
            invalidates: decoded.invalidates, enqueued: Date(timeIntervalSince1970: decoded.enqueued))
        self.sequence = sequence
        self.failure = failure
    }

    private struct Details: Codable {
        var method: String
        var url: String
        var headers: [Header]
        var optimisticUpdate: String?
        var usesResponse: Bool
        var invalidates: [String]
        var enqueued: Double
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
}
