public import ResourceKit

/// What a stage plugin makes: a transformer for one stage of a resource's response pipeline, for some content
/// types.
public struct ResponseStage: PipelineComponent, Sendable {
    /// The pipeline stage it joins.
    package var stage: PipelineStageKey
    /// The transformer.
    package var transformer: any ResponseTransformer
    /// The content types it applies to (`*/*` for all, `*/*+json` style wildcards allowed).
    package var contentTypes: [String]
    /// Whether it replaces the stage's other transformers rather than joining them.
    package var replacesExisting: Bool

    /// Makes a component.
    public init(
        stage: PipelineStageKey, transformer: any ResponseTransformer, contentTypes: [String] = ["*/*"],
        replacesExisting: Bool = false
    ) {
        self.stage = stage
        self.transformer = transformer
        self.contentTypes = contentTypes
        self.replacesExisting = replacesExisting
    }

    /// Adds the transformer to `configuration`'s pipeline.
    package func apply(to configuration: inout ResourceConfiguration) {
        if replacesExisting { configuration.pipeline[stage].removeTransformers() }
        configuration.pipeline[stage].add(transformer, contentTypes: contentTypes)
    }
}
