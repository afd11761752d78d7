import TetherJSON
import TransportKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Which standard transformers a ``Service`` installs on every resource, at the ``PipelineStageKey/parsing`` stage.
public struct StandardTransformers: OptionSet, Sendable {
    /// The option bits.
    public let rawValue: Int

    /// Makes a set from its bits.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `text/*` bodies become a `String` (``TextTransformer``).
    public static let text = StandardTransformers(rawValue: 1 << 0)
    /// `application/json` and `*/*+json` bodies become a `JSONValue` (``JSONTransformer``).
    public static let json = StandardTransformers(rawValue: 1 << 1)
    /// Text and JSON.
    public static let all: StandardTransformers = [.text, .json]
}

/// Decodes a `Data` body to a `String` with the entity's charset (UTF-8 when none is given). Content that is already
/// a `String` passes through.
public struct TextTransformer: ResponseTransformer {
    /// Makes the transformer.
    public init() {}

    /// Decodes the content.
    public func transform(_ entity: Entity) throws -> Entity {
        if entity.content is String { return entity }
        guard let data = entity.content as? Data else {
            throw TransformError("expected a Data body to decode as text, got \(type(of: entity.content))")
        }
        var entity = entity
        entity.content = try Self.decode(data, charset: entity.charset)
        return entity
    }

    static func decode(_ data: Data, charset: String?) throws -> String {
        switch charset ?? "utf-8" {
        case "utf-8", "utf8":
            guard let text = String(validating: data, as: UTF8.self) else {
                throw TransformError("the body is not valid UTF-8")
            }
            return text
        case "us-ascii", "ascii":
            guard data.allSatisfy({ $0 < 0x80 }) else { throw TransformError("the body is not valid US-ASCII") }
            return String(decoding: data, as: UTF8.self)
        case "iso-8859-1", "latin1", "iso_8859-1":
            return String(String.UnicodeScalarView(data.map { Unicode.Scalar($0) }))
        case "utf-16le":
            return try decodeUTF16(data, bigEndian: false)
        case "utf-16be", "utf-16":
            return try decodeUTF16(data, bigEndian: true)
        case let other:
            throw TransformError("unsupported charset \"\(other)\"")
        }
    }

    private static func decodeUTF16(_ data: Data, bigEndian: Bool) throws -> String {
        guard data.count.isMultiple(of: 2) else { throw TransformError("the UTF-16 body has an odd number of bytes") }
        let bytes = Array(data)
        let units = stride(from: 0, to: bytes.count, by: 2).map { index -> UInt16 in
            let (high, low) = bigEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
            return UInt16(high) << 8 | UInt16(low)
        }
        guard let text = String(validating: units, as: UTF16.self) else {
            throw TransformError("the body is not valid UTF-16")
        }
        return text
    }
}

/// Parses a JSON body (`Data` or `String`) to a `JSONValue`. Content that is already a `JSONValue` passes through.
public struct JSONTransformer: ResponseTransformer {
    /// Makes the transformer.
    public init() {}

    /// Parses the content.
    public func transform(_ entity: Entity) throws -> Entity {
        if entity.content is JSONValue { return entity }
        var entity = entity
        do {
            entity.content = try JSONValue(parsing: try jsonData(of: entity))
        } catch let error as TransformError {
            throw error
        } catch {
            throw TransformError("the body is not valid JSON: \(error)")
        }
        return entity
    }
}

/// Decodes a JSON body to `Model`: from `Data`, a `String`, or a `JSONValue` left by the JSON transformer. A body
/// that does not match `Model` fails the load with the decoder's account of where (the coding path).
public struct DecodableTransformer<Model: Decodable & Sendable>: ResponseTransformer {
    let makeDecoder: @Sendable () -> JSONDecoder

    /// Makes the transformer; `decoder` makes the `JSONDecoder` to use (one per response).
    public init(decoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }) {
        self.makeDecoder = decoder
    }

    /// Decodes the content.
    public func transform(_ entity: Entity) throws -> Entity {
        if entity.content is Model { return entity }
        let data = try jsonData(of: entity)
        var entity = entity
        do {
            entity.content = try makeDecoder().decode(Model.self, from: data)
        } catch let error as DecodingError {
            throw TransformError("the body does not decode as \(Model.self): \(describe(error))")
        }
        return entity
    }
}

/// The JSON bytes of an entity's content.
func jsonData(of entity: Entity) throws -> Data {
    switch entity.content {
    case let data as Data: return data
    case let text as String: return Data(text.utf8)
    case let json as JSONValue: return Data(json.jsonBytes)
    case let other: throw TransformError("expected a JSON body, got \(type(of: other)) (\(entity.mimeType))")
    }
}

/// A decoding error told with its coding path.
func describe(_ error: DecodingError) -> String {
    func path(_ context: DecodingError.Context) -> String {
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return path.isEmpty ? "at the top level" : "at \(path)"
    }
    switch error {
    case .typeMismatch(let type, let context):
        return "expected \(type) \(path(context)): \(context.debugDescription)"
    case .valueNotFound(let type, let context):
        return "missing \(type) value \(path(context)): \(context.debugDescription)"
    case .keyNotFound(let key, let context):
        return "missing key \"\(key.stringValue)\" \(path(context))"
    case .dataCorrupted(let context):
        return "corrupted data \(path(context)): \(context.debugDescription)"
    @unknown default:
        return "\(error)"
    }
}
