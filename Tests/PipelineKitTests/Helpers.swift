import Foundation
import PipelineKit
import PipelinePlugins
import Testing

/// Loads `yaml` with the standard plugins (and `registry` changes), or returns the error.
func load(
    _ yaml: String, registry: PluginRegistry = .standard, environment: [String: String] = [:], baseDirectory: URL? = nil
) throws(ConfigurationError) -> PipelineConfiguration {
    try ConfigurationLoader(registry: registry, environment: environment)
        .load(yaml: yaml, file: "test.yaml", baseDirectory: baseDirectory)
}

/// The issues `yaml` has; records a failure when it loads.
func issues(
    _ yaml: String, registry: PluginRegistry = .standard, environment: [String: String] = [:],
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
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("tether-pipeline-" + UUID().uuidString)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}
