public import Foundation
import ResourceKit

/// The settings every stage plugin takes.
///
/// ```yaml
/// stages:
///   - { type: json, content_types: [application/json, "*/*+json"] }
/// ```
public struct StageSettings: Decodable, Sendable {
    /// The content types the transformer applies to; nil for the plugin's own.
    public var contentTypes: [String]?
    /// Whether it replaces the stage's other transformers.
    public var replacesExisting: Bool

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case contentTypes = "content_types"
        case replacesExisting = "replace"
    }

    /// The plugin's content types, added beside the stage's other transformers.
    public init(contentTypes: [String]? = nil, replacesExisting: Bool = false) {
        self.contentTypes = contentTypes
        self.replacesExisting = replacesExisting
    }

    /// Decodes the settings.
    public init(from decoder: any Decoder) throws {
        self.init()
        let settings = try decoder.settings(CodingKeys.self)
        contentTypes = try settings.decode(.contentTypes, as: [String].self)
        if let contentTypes, contentTypes.isEmpty || contentTypes.contains(where: { !$0.contains("/") }) {
            try settings.invalid(
                .contentTypes, "give content types such as application/json or */*+json (found \(contentTypes))")
        }
        replacesExisting = try settings.decode(.replacesExisting, default: false)
    }
}

/// `type: json` — parses JSON bodies to `JSONValue` at the parsing stage.
package struct JSONStagePlugin: PipelinePlugin {
    /// "json".
    package let type = "json"
    /// Makes the plugin.
    package init() {}
    /// For `application/json` and `*/*+json`.
    package var defaultSettings: StageSettings { .init() }
    /// The JSON transformer.
    package func make(_ settings: StageSettings, context: AssemblyContext) throws -> ResponseStage {
        ResponseStage(
            stage: .parsing, transformer: JSONTransformer(),
            contentTypes: settings.contentTypes ?? ["application/json", "*/*+json"],
            replacesExisting: settings.replacesExisting)
    }
}

/// `type: text` — decodes text bodies to `String` (by their charset) at the decoding stage.
package struct TextStagePlugin: PipelinePlugin {
    /// "text".
    package let type = "text"
    /// Makes the plugin.
    package init() {}
    /// For `text/*`.
    package var defaultSettings: StageSettings { .init() }
    /// The text transformer.
    package func make(_ settings: StageSettings, context: AssemblyContext) throws -> ResponseStage {
        ResponseStage(
            stage: .decoding, transformer: TextTransformer(), contentTypes: settings.contentTypes ?? ["text/*"],
            replacesExisting: settings.replacesExisting)
    }
}

/// A model stage for your own `Decodable` type, registered under a name of your choosing — the `decodable`-style
/// stage configuration then names:
///
/// ```swift
/// registry.register(DecodableStagePlugin<[Item]>(type: "item-list"))
/// ```
/// ```yaml
/// - pattern: /stores/*/items
///   stages: [{ type: item-list }]
/// ```
public struct DecodableStagePlugin<Model: Decodable & Sendable>: PipelinePlugin {
    /// The name configuration uses.
    public let type: String
    private let decoder: @Sendable () -> JSONDecoder

    /// Makes the plugin; `decoder` makes the `JSONDecoder` (to set date or key strategies).
    public init(type: String, decoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }) {
        self.type = type
        self.decoder = decoder
    }

    /// For `application/json` and `*/*+json`, replacing the model stage's other transformers.
    public var defaultSettings: StageSettings { .init(replacesExisting: true) }

    /// The decoding transformer at the model stage.
    public func make(_ settings: StageSettings, context: AssemblyContext) throws -> ResponseStage {
        ResponseStage(
            stage: .model, transformer: DecodableTransformer<Model>(decoder: decoder),
            contentTypes: settings.contentTypes ?? ["application/json", "*/*+json"], replacesExisting: true)
    }
}
