import TransportKit

/// The name of a stage of the response pipeline. Stages run in ``Pipeline/order``.
public struct PipelineStageKey: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The stage's name.
    public let rawValue: String

    /// Makes a key; use it for stages of your own (add them to ``Pipeline/order``).
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Raw bytes, before anything else (decompression, decryption).
    public static let rawData = PipelineStageKey(rawValue: "rawData")
    /// Byte-level decoding.
    public static let decoding = PipelineStageKey(rawValue: "decoding")
    /// Bytes to a generic structure: text and JSON (the standard transformers).
    public static let parsing = PipelineStageKey(rawValue: "parsing")
    /// A generic structure to your model types.
    public static let model = PipelineStageKey(rawValue: "model")
    /// Last touches.
    public static let cleanup = PipelineStageKey(rawValue: "cleanup")

    /// The stage's name.
    public var description: String { rawValue }
}

/// One stage of the pipeline: transformers, each for some content types. For each response, the first whose
/// content types match the entity's media type runs; none matching leaves the entity as it is.
public struct PipelineStage: Sendable {
    struct Entry: Sendable {
        let transformer: any ResponseTransformer
        let contentTypes: [Glob]

        func accepts(_ mimeType: String) -> Bool {
            contentTypes.contains { $0.matches(mimeType) }
        }
    }

    var entries: [Entry] = []

    /// Makes an empty stage.
    public init() {}

    /// Adds `transformer` for content types matching any of `contentTypes` (globs such as `application/json`,
    /// `text/*`, `*/*+json`; `*/*` for every type). Earlier transformers take precedence.
    public mutating func add(_ transformer: any ResponseTransformer, contentTypes: [String] = ["*/*"]) {
        entries.append(Entry(transformer: transformer, contentTypes: contentTypes.map { Glob($0.lowercased()) }))
    }

    /// Removes every transformer from this stage.
    public mutating func removeTransformers() {
        entries.removeAll()
    }

    /// Whether the stage has no transformers.
    public var isEmpty: Bool { entries.isEmpty }

    /// How many transformers the stage has.
    public var count: Int { entries.count }
}

/// The response pipeline: what a successful response's body becomes before it is a resource's data.
///
/// ```swift
/// service.configure("/users/*") {
///     $0.pipeline[.model].add(DecodableTransformer<User>(), contentTypes: ["*/json"])
/// }
/// ```
public struct Pipeline: Sendable {
    /// The stages, in the order they run.
    public var order: [PipelineStageKey] = [.rawData, .decoding, .parsing, .model, .cleanup]
    var stages: [PipelineStageKey: PipelineStage] = [:]

    /// Makes an empty pipeline.
    public init() {}

    /// The stage named `key` (empty if never set).
    public subscript(key: PipelineStageKey) -> PipelineStage {
        get { stages[key] ?? PipelineStage() }
        set { stages[key] = newValue }
    }

    /// Removes every transformer from every stage.
    public mutating func removeAllTransformers() {
        stages.removeAll()
    }

    /// Whether no stage has a transformer.
    public var isEmpty: Bool { stages.values.allSatisfy(\.isEmpty) }

    /// Runs `entity` through the stages in order; on failure, the stage that failed and its error.
    func process(_ entity: Entity) -> Result<Entity, StageFailure> {
        var entity = entity
        for key in order {
            guard let stage = stages[key], !stage.isEmpty else { continue }
            let mimeType = entity.mimeType
            guard let entry = stage.entries.first(where: { $0.accepts(mimeType) }) else { continue }
            do {
                entity = try entry.transformer.transform(entity)
            } catch {
                return .failure(StageFailure(stage: key, error: error))
            }
        }
        return .success(entity)
    }
}

/// A stage's transformer failed.
struct StageFailure: Error {
    let stage: PipelineStageKey
    let error: any Error
}
