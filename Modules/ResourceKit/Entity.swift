public import TransportKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A resource's data: content, the headers it came with, and when it was received.
///
/// `content` is whatever the response pipeline made of the body: `Data` when no transformer matched, a `String`
/// for `text/*`, a `JSONValue` for JSON, or your model type. Read it with ``typedContent(as:)``.
public struct Entity: Sendable {
    /// The content, as the pipeline left it.
    public var content: any Sendable
    /// The header fields, looked up without regard to case.
    public var headers: HTTPHeaders
    /// When the data was received (or last confirmed unchanged by a 304).
    public var timestamp: Date

    /// Makes an entity. A `contentType` given here is stored as the `Content-Type` header.
    public init(content: any Sendable, headers: HTTPHeaders = [:], contentType: String? = nil, timestamp: Date) {
        self.content = content
        self.headers = headers
        self.timestamp = timestamp
        if let contentType { self.headers["Content-Type"] = contentType }
    }

    /// The `Content-Type` header as given, or `application/octet-stream` when there is none.
    public var contentType: String {
        headers["Content-Type"] ?? "application/octet-stream"
    }

    /// The media type alone, lower-cased: `application/json` for `application/json; charset=utf-8`.
    public var mimeType: String {
        let type = contentType.split(separator: ";", maxSplits: 1).first ?? ""
        return type.trimmingSpaces.lowercased()
    }

    /// The `charset` parameter of the content type, lower-cased, if there is one.
    public var charset: String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingSpaces.lowercased() == "charset" else {
                continue
            }
            var value = Substring(pair[1].trimmingSpaces)
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            return value.lowercased()
        }
        return nil
    }

    /// The `ETag` header, if there is one.
    public var etag: String? {
        headers["ETag"]
    }

    /// The value of the header named `name` (any case).
    public func header(_ name: String) -> String? {
        headers[name]
    }

    /// The content as `T`, or nil if it is something else.
    public func typedContent<T>(as type: T.Type = T.self) -> T? {
        content as? T
    }

    /// The content as `T`, or `ifNone` if it is something else.
    public func typedContent<T>(ifNone: @autoclosure () -> T) -> T {
        (content as? T) ?? ifNone()
    }
}
