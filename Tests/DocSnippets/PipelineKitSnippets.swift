// The examples of Docs/PipelineKit.md and Docs/Configuration.md, compiled (see OwnershipKitSnippets.swift). This file
// imports ServiceLifecycle beside ResourceKit, as an application that runs the pipeline's group does: both name a
// type `Service`, so Tether's is spelled `ResourceKit.Service` here (the docs do the same).
import Foundation
import LiveQueryKit
import Logging
import PipelineKit
import PipelinePlugins
import ResourceKit
import ServiceLifecycle
import TetherJSON
import TransportKit

enum PipelineKitSnippets {
    static func load() -> PipelineConfiguration {
        // snippet: PipelineKit.load
        let registry = PluginRegistry.standard
        registry.register(DecodableStagePlugin<[Item]>(type: "item-list"))  // your model stage
        let configuration: PipelineConfiguration
        do {
            configuration = try ConfigurationLoader(registry: registry).load(file: "configuration.yaml")
        } catch {
            // configuration.yaml:7:13: services.api.transport.type: unknown transport type 'curl'; known types: …
            print(error)
            exit(2)
        }
        // end snippet
        return configuration
    }

    static func assemble(_ configuration: PipelineConfiguration) throws -> AssembledPipeline {
        // snippet: PipelineKit.assemble
        let pipeline = try AssembledPipeline.assemble(configuration)
        // end snippet
        return pipeline
    }

    static func run(pipeline: AssembledPipeline, logger: Logger) async throws {
        // snippet: PipelineKit.run
        try await pipeline.serviceGroup(running: MyApplication(pipeline: pipeline), logger: logger).run()
        // end snippet
    }

    static func shutdown(pipeline: AssembledPipeline) async throws {
        // snippet: PipelineKit.shutdown
        try await pipeline.shutdown()  // without a service group: the clients, then the database, once
        // end snippet
    }
}

/// The application, run as the group's last service.
struct MyApplication: ServiceLifecycle.Service {
    let pipeline: AssembledPipeline
    func run() async throws {
        let screen = try ItemsPipelineScreen(pipeline: pipeline)
        try await screen.use()
    }
}

final class ItemsPipelineScreen: Sendable {
    let pipeline: AssembledPipeline

    init(pipeline: AssembledPipeline) throws {
        self.pipeline = pipeline
    }

    func show(_ items: [Item]?) {}
    func render(_ documents: [Document]) {}

    func use() async throws {
        // snippet: PipelineKit.use
        let service: ResourceKit.Service = try pipeline.service(named: "api")
        service.resource("/items").addObserver(owner: self, delivery: pipeline.resourceDelivery.resourcePolicy) {
            [weak self] resource, _ in self?.show(resource.typedContent(as: [Item].self))
        }

        let items = try pipeline.liveQuery(named: "abc-items")  // with its configured delivery
        try items.observe(owner: self) { [weak self] documents, event, signalNext in
            self?.render(documents)
            signalNext()  // needed under next-signal; under the other policies the pipeline signals for you
        }
        try await pipeline.store.collection("items").upsert(["store_id": "abc123", "name": "Fig"])
        // end snippet
    }
}

/// Serves canned responses from files in a folder (the body of the plugin example's transport).
final class FixtureTransport: Transport {
    let directory: String
    init(directory: String) { self.directory = directory }
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let file = URL(fileURLWithPath: directory).appendingPathComponent(request.url.lastPathComponent)
        let body = (try? Data(contentsOf: file)) ?? Data()
        return TransportResponse(status: body.isEmpty ? 404 : 200, body: body)
    }
}

// snippet: Configuration.plugin
struct FixtureTransportPlugin: PipelinePlugin {
    let type = "fixtures"

    struct Settings: Decodable, Sendable {
        var directory = "Fixtures"
        enum CodingKeys: String, CodingKey, CaseIterable { case directory }
        init() {}
        init(from decoder: any Decoder) throws {
            let settings = try decoder.settings(CodingKeys.self)
            directory = try settings.decode(
                .directory, default: directory, where: { !$0.isEmpty }, "must name a folder")
        }
    }

    var defaultSettings: Settings { Settings() }

    func make(_ settings: Settings, context: AssemblyContext) throws -> TransportComponent {
        TransportComponent(FixtureTransport(directory: context.resolve(settings.directory)))
    }
}

func registerFixtures() {
    let registry = PluginRegistry.standard
    registry.register(FixtureTransportPlugin())
}
// end snippet
