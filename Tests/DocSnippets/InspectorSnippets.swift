import LiveQueryKit
import Logging
import PipelineKit
import ResourceKit
import ServiceLifecycle
import TetherInspector
import UnixSignals

/// Docs/Inspector.md's examples, compiled (never run).
enum InspectorSnippets {
    static func start(
        service: ResourceKit.Service, store: Store, app: some ServiceLifecycle.Service, logger: Logger
    ) async throws {
        // snippet: Inspector.start
        let inspector = try Inspector(configuration: InspectorConfiguration(port: 7070), logger: logger)
        inspector.watch(service, named: "api")
        inspector.watch(store, named: "items")
        let group = ServiceGroup(services: [inspector, app], gracefulShutdownSignals: [.sigterm], logger: logger)
        try await group.run()  // the page: http://127.0.0.1:7070/
        // end snippet
    }

    static func pipeline(
        _ pipeline: AssembledPipeline, app: some ServiceLifecycle.Service, logger: Logger
    ) throws -> ServiceGroup {
        // snippet: Inspector.pipeline
        let inspector = try Inspector(configuration: InspectorConfiguration(port: 7070), logger: logger)
        for (name, service) in pipeline.services { inspector.watch(service, named: name) }
        inspector.watch(pipeline.store, named: "store")
        // end snippet
        return ServiceGroup(services: [inspector, app], logger: Logger(label: "app"))
    }
}
