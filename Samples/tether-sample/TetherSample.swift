import ArgumentParser
import Foundation
import Logging
import PipelineKit
import PipelinePlugins
import ServiceLifecycle
import TetherConcurrency
import TetherInspector
import UnixSignals

#if Postgres
import PostgresPipelinePlugin
#endif

/// `tether-sample`: Tether's whole mission on one command, assembled by PipelineKit from `configuration.yaml`.
@main
struct TetherSample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether-sample",
        abstract:
            "Tether at work: ownership and eviction, back pressure, a cache that survives restarts, and mutations that survive a kill.",
        discussion: """
            Reads the configuration (transport, persistence, memory pressure, delivery, live queries and the \
            scenario sizes), starts the embedded demo API on 127.0.0.1 unless the configuration names another base \
            URL, runs four scenarios, prints a summary and writes an HTML report with memory charts. Run it twice: \
            the second run shows the cached data at once, then a 304 revalidation. Exits 1 if a promise the sample \
            checks is broken, 2 if the configuration is wrong.
            """)

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "path"))
    var config = "configuration.yaml"

    @Option(name: .long, help: ArgumentHelp("Where to write the HTML report.", valueName: "path"))
    var report = "tether-report.html"

    @Flag(name: .long, help: "Print only the checks that fail, the summary and errors; no progress.")
    var quiet = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Instead of one pass, run the ownership and back-pressure scenarios in a loop for this many seconds, sampling memory every second; report the slope and what is left alive.",
            valueName: "seconds"))
    var soak: Int?

    @Flag(
        name: .long,
        help: "Stop, as on SIGTERM, when the process that started the sample exits (for test runners and supervisors).")
    var exitWithParent = false

    @Flag(
        name: .long,
        help:
            "Serve the inspector on 127.0.0.1 while the scenarios run, print its address, and keep running afterwards until Ctrl-C."
    )
    var inspect = false

    @Option(
        name: .long, help: ArgumentHelp("The inspector's port (0: a free one).", valueName: "port"))
    var inspectPort = 0

    /// The mutations scenario's other process: which part it plays (``OutboxChild``).
    @Option(name: .long, help: ArgumentHelp(visibility: .private))
    var outboxPhase: OutboxChild.Phase?

    /// With `--outbox-phase`: the scenario's run, and the demo API's base URL.
    @Option(name: .long, help: ArgumentHelp(visibility: .private))
    var outboxRun = ""

    @Option(name: .long, help: ArgumentHelp(visibility: .private))
    var outboxServer: String?

    func validate() throws {
        if let soak, soak < 1 { throw ValidationError("--soak takes a number of seconds, at least 1 (got \(soak))") }
        if !(0...65_535).contains(inspectPort) {
            throw ValidationError("--inspect-port takes a port in 0…65535 (got \(inspectPort))")
        }
    }

    func run() async throws {
        // Signals are trapped before anything starts, and acted on for the whole run.
        let interrupts = await InterruptGuard()
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await interrupts.watch() }
            if exitWithParent { group.addTask { await interrupts.watchParent() } }
            try await runSample(interrupts: interrupts)
            group.cancelAll()
        }
    }

    private func runSample(interrupts: InterruptGuard) async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let console = Console(quiet: quiet)
        let registry = PluginRegistry.standard
        #if Postgres
        registry.withPostgres()
        #endif
        registry.registerSection("sample", as: SampleSettings.self)
        registry.register(DecodableStagePlugin<[InventoryItem]>(type: "inventory"))

        let configuration: PipelineConfiguration
        do {
            let file = config
            configuration = try await offThePool { try ConfigurationLoader(registry: registry).load(file: file) }
        } catch {
            FileHandle.standardError.write(Data("error: the configuration is not usable:\n\(error)\n".utf8))
            #if !Postgres
            let namesPostgres = (error as? ConfigurationError)?.issues.contains {
                $0.kind == .unknownType && $0.message.hasPrefix("unknown persistence type 'postgres'")
            }
            if namesPostgres == true {
                FileHandle.standardError.write(
                    Data(
                        "note: this build of the sample has no PostgreSQL plugin; run it as `swift run --traits Postgres tether-sample --config \(config)`\n"
                            .utf8))
            }
            #endif
            throw ExitCode(2)
        }
        interrupts.startingServices()
        let settings = configuration.section("sample", as: SampleSettings.self) ?? SampleSettings()
        guard let serviceConfiguration = configuration.service(named: settings.service) else {
            FileHandle.standardError.write(
                Data(
                    "error: \(config): sample.service names '\(settings.service)', which is not under services:\n".utf8)
            )
            throw ExitCode(2)
        }

        if let outboxPhase {
            return try await runOutboxChild(
                outboxPhase, configuration: configuration, settings: settings, interrupts: interrupts)
        }
        console.always("Tether sample — configuration \(config)")
        console.section("1. The embedded demo API")
        var server: DemoServer?
        if serviceConfiguration.baseURL == nil {
            server = try await DemoServer.start(settings: settings.server)
            console.line(
                "listening on \(server!.baseURL) (loopback only); every \(settings.server.slowEvery)th answer slow, every \(settings.server.failEvery)th a 503"
            )
        } else {
            console.line(
                "using \(serviceConfiguration.baseURL!) from the configuration; the embedded server is not started")
        }
        let pipeline: AssembledPipeline
        do {
            pipeline = try AssembledPipeline.assemble(configuration, baseURL: server?.baseURL)
        } catch {
            await server?.stop()
            FileHandle.standardError.write(Data("error: the pipeline could not be assembled:\n\(error)\n".utf8))
            throw ExitCode(2)
        }
        let application = SampleApplication(
            pipeline: pipeline, settings: settings, server: server, console: console, configurationFile: config,
            reportPath: report, soak: soak.map { .seconds($0) },
            inspector: inspect ? try Self.inspector(watching: pipeline, port: inspectPort) : nil)
        let group = pipeline.serviceGroup(running: application, logger: Logger(label: "tether.sample"))
        await interrupts.hand(to: group)
        do {
            try await group.run()
        } catch {
            await server?.stop()
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(1)
        }
        await server?.stop()
        // 128 + the signal's number, as a shell reports a process the signal ended: 130 for SIGINT, 143 for SIGTERM.
        if let signal = interrupts.received { throw ExitCode(128 + signal.rawValue) }
        if application.interrupted.withLock({ $0 }) { throw ExitCode(130) }
        if !console.failures.isEmpty { throw ExitCode(1) }
    }

    /// Plays `phase` of the mutations scenario for the sample that started this process.
    private func runOutboxChild(
        _ phase: OutboxChild.Phase, configuration: PipelineConfiguration, settings: SampleSettings,
        interrupts: InterruptGuard
    ) async throws {
        let pipeline: AssembledPipeline
        do {
            pipeline = try AssembledPipeline.assemble(configuration, baseURL: outboxServer)
        } catch {
            FileHandle.standardError.write(Data("error: the pipeline could not be assembled:\n\(error)\n".utf8))
            throw ExitCode(2)
        }
        let child = OutboxChild(pipeline: pipeline, settings: settings, phase: phase, run: outboxRun)
        let group = pipeline.serviceGroup(running: child, logger: Logger(label: "tether.sample.outbox"))
        await interrupts.hand(to: group)
        do {
            try await group.run()
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// An inspector on 127.0.0.1 watching every service of the pipeline by its name in the configuration, and the
    /// store.
    private static func inspector(watching pipeline: AssembledPipeline, port: Int) throws -> Inspector {
        let inspector = try Inspector(
            configuration: InspectorConfiguration(port: port), logger: Logger(label: "tether.inspector"))
        for (name, service) in pipeline.services { inspector.watch(service, named: name) }
        inspector.watch(pipeline.store, named: "store")
        return inspector
    }
}
