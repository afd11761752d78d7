import Foundation
import Logging
import PipelineKit
import PipelinePlugins
import PostgresPipelinePlugin
import ResourceKit
import Testing
import TetherTesting

/// Loads `yaml` with every plugin Tether ships — the standard ones and PostgreSQL's — (and `registry` changes), or
/// returns the error.
func load(
    _ yaml: String, registry: PluginRegistry = .standard.withPostgres(), environment: [String: String] = [:],
    baseDirectory: URL? = nil
) throws(ConfigurationError) -> PipelineConfiguration {
    try ConfigurationLoader(registry: registry, environment: environment)
        .load(yaml: yaml, file: "test.yaml", baseDirectory: baseDirectory)
}

/// The issues `yaml` has; records a failure when it loads.
func issues(
    _ yaml: String, registry: PluginRegistry = .standard.withPostgres(), environment: [String: String] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
) -> [ConfigurationError.Issue] {
    do {
        _ = try load(yaml, registry: registry, environment: environment)
        Issue.record("the configuration loaded, but problems were expected", sourceLocation: sourceLocation)
        return []
    } catch {
        return error.issues
    }
}

/// A fresh folder, removed after `body`.
func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
        "tether-pipeline-" + UUID().uuidString)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

/// Assembles `configuration`, runs `body` with the pipeline, and checks that once the test has let go, the pipeline,
/// its store and its services' faces are deallocated. (The suites' `.leakChecked` trait checks the rest: the
/// services' cores, which hold their transports, every resource, live query and cache.)
func withPipeline<T>(
    _ configuration: PipelineConfiguration, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (AssembledPipeline, LeakTracker) async throws -> T
) async throws -> T {
    let tracker = LeakTracker()
    let result: T
    do {
        let pipeline = tracker.track(try AssembledPipeline.assembleQuietly(configuration), "pipeline")
        tracker.track(pipeline.store, "store")
        for named in pipeline.services {
            tracker.track(named.service, "service \(named.name)")
        }
        result = try await body(pipeline, tracker)
    }
    // Observers on queues of their own drop their last references when their queue runs its last job.
    let survivors = await tracker.survivors(waitingUpTo: .seconds(5))
    #expect(survivors.isEmpty, "still alive after the test: \(survivors)", sourceLocation: sourceLocation)
    return result
}

extension AssembledPipeline {
    /// Assembles with a logger that prints nothing: the parts' notices about the test's own configuration (a PSI
    /// file that polls, persistence left in memory) are not test output. A test about a log line passes its own.
    static func assembleQuietly(_ configuration: PipelineConfiguration) throws(ConfigurationError) -> AssembledPipeline
    {
        try assemble(
            configuration, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        )
    }
}
