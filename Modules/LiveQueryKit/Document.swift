import DocumentStoreKit
public import Foundation
public import TetherJSON

/// A document as a live query or `exec()` returns it: an immutable value — its `_id` and its JSON — that you may
/// keep, compare and pass between threads.
///
/// ```swift
/// let name = document["name"]?.stringValue
/// let city = document["address.city"]?.stringValue        // a dotted path reaches inside
/// let item = try document.decode(as: Item.self)
/// ```
public struct Document: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// The document's `_id`.
    public let id: String
    /// The whole document, `_id` included.
    public let value: JSONValue

    init(_ stored: StoredDocument) {
        self.id = stored.id
        self.value = stored.body
    }

    /// The value at a dotted path (`"address.city"`), or nil when a step is missing.
    public subscript(path: String) -> JSONValue? {
        value[path: path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)]
    }

    /// The string at `path`, if it is one.
    public func string(_ path: String) -> String? { self[path]?.stringValue }
    /// The number at `path`, if it is one.
    public func double(_ path: String) -> Double? { self[path]?.doubleValue }
    /// The whole number at `path`, if it is one that fits an `Int`.
    public func int(_ path: String) -> Int? { self[path]?.intValue }
    /// The Boolean at `path`, if it is one.
    public func bool(_ path: String) -> Bool? { self[path]?.boolValue }

    /// Decodes the document into `type` with a `JSONDecoder`.
    ///
    /// - Throws: The decoder's `DecodingError`, naming the coding path that did not fit.
    public func decode<T: Decodable>(as type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(T.self, from: Data(value.jsonBytes))
    }

    /// The document as JSON text.
    public var description: String { value.jsonText }
}
