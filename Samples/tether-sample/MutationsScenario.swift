import EntityCacheKit
import Foundation
import MutationOutboxKit
import PipelineKit
import ResourceKit
import TransportKit

/// Scenario 5 — mutations that are never lost and never applied twice. The demo API goes down; a second process's
/// screens change their baskets (each change durable, shown at once) and the process is killed with `SIGKILL`. A
/// third process resumes the outbox — the screens show the pending changes again — and is killed too once the API is
/// back, while the server holds the answers of changes it has applied. A fourth drains the outbox. The server must
/// end with every change exactly once, in order, and every screen on the server's state.
struct MutationsScenario {
    struct Result: Sendable {
        /// Why the scenario did not run, when it did not.
        var skipped: String?
        var screens = 0
        var changes = 0
        /// What happened when, in seconds since the API went down.
        var events: [(seconds: Double, label: String)] = []
        /// Entries in the outbox over time.
        var outbox: [(Double, Double)] = []
        /// This run's changes the server applied, over time.
        var applied: [(Double, Double)] = []
        /// Changes the server was sent again with a key it had applied, and answered without applying.
        var replayed = 0
        /// Requests the API answered 503 while down.
        var refusedWhileDown = 0
        /// Entries an earlier run of the sample left in the outbox, sent first.
        var leftovers = 0
        /// From the API coming back to an empty outbox.
        var drainSeconds: Double?
    }

    let pipeline: AssembledPipeline
    let service: ResourceKit.Service
    let settings: SampleSettings
    let server: DemoServer?
    let console: Console
    let configurationFile: String

    func run() async throws -> Result {
        var result = Result()
        guard let server else {
            return skip(&result, "the configuration names an external API, and the scenario must take the API down")
        }
        guard let outbox = service.mutationConfiguration.outbox, !(outbox is InMemoryMutationOutbox) else {
            return skip(&result, "the persistence keeps no outbox another process can read (a memory store)")
        }
        let run = String(UUID().uuidString.prefix(8)).lowercased()
        let paths = (0..<settings.mutationScreens).map { "/baskets/\(run)/\($0)" }
        guard let keyHeader = service.resource(paths[0]).configuration(for: .post).idempotencyKeyHeader else {
            return skip(&result, "idempotency_header is null: no server could tell a change sent again from a new one")
        }
        server.baskets.keys(in: keyHeader)
        result.screens = settings.mutationScreens
        result.changes = settings.mutationScreens * settings.mutationsPerScreen
        result.leftovers = try await service.pendingMutations().count
        if result.leftovers > 0 {
            console.line("\(result.leftovers) mutations an earlier run left in the outbox are sent with this run's")
        }
        try await service.clearFailedMutations()
        // The screens have been open before: the persistent cache holds their (empty) baskets.
        for path in paths { _ = await service.resource(path).load().outcome }
        await pipeline.persistentCache?.flush()

        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("tether-outbox-\(run)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer {
            ChildSample.copySanitizerReports(in: folder)
            try? FileManager.default.removeItem(at: folder)
        }
        let timeline = Timeline(service: service, baskets: server.baskets, paths: paths)
        var child: ChildSample?
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await timeline.sample() }
                try await act(
                    &result, server: server, run: run, paths: paths, folder: folder, timeline: timeline, child: &child)
                group.cancelAll()
            }
        } catch {
            child?.kill()
            server.baskets.releaseHeldAnswers()
            server.baskets.isDown = false
            throw error
        }
        try await timeline.sampleOnce()
        (result.outbox, result.applied, result.events) = timeline.series
        let statistics = server.baskets.statistics
        result.replayed = statistics.replayed
        result.refusedWhileDown = statistics.refusedWhileDown
        return result
    }

    private func skip(_ result: inout Result, _ reason: String) -> Result {
        result.skipped = reason
        console.line("skipped: \(reason)")
        return result
    }

    /// The three processes, one after another.
    private func act(
        _ result: inout Result, server: DemoServer, run: String, paths: [String], folder: URL, timeline: Timeline,
        child: inout ChildSample?
    ) async throws {
        let baskets = server.baskets
        let arguments = { (phase: OutboxChild.Phase) in
            [
                "--config", configurationFile, "--outbox-phase", phase.rawValue, "--outbox-run", run,
                "--outbox-server", server.baseURL,
            ]
        }
        baskets.isDown = true
        timeline.mark("API down")

        // Offline: every change shown at once, queued, and the process killed.
        let offline = try ChildSample("offline", arguments: arguments(.offline), folder: folder)
        child = offline
        guard try await offline.waitForLine("ready", timeout: .seconds(60)) else {
            return failed(offline, "the offline process made its changes")
        }
        let queued = Dictionary(grouping: offline.lines.filter { $0.first == "queued" && $0.count == 3 }) {
            Int($0[1]) ?? -1
        }.mapValues { $0.map { $0[2] } }
        let expected = (0..<settings.mutationScreens).map { queued[$0] ?? [] }
        console.line("API down; \(result.changes) changes made on \(result.screens) screens, each durable")
        console.check(
            expected.map(\.count).reduce(0, +) == result.changes,
            "mutate returned for every change, each written to the outbox first")
        console.check(
            shown(by: offline) == expected,
            "every screen showed its changes at once, with the API down (optimistic layers)")
        // Mid-outbox: killed once the outbox has tried its changes again, and been refused, since they were made.
        let refusedWhenReady = baskets.statistics.refusedWhileDown
        try await waitUntil(timeout: .seconds(30)) {
            baskets.statistics.refusedWhileDown > refusedWhenReady || !offline.isRunning
        }
        offline.kill()
        _ = try await offline.waitForExit(timeout: .seconds(10))
        timeline.mark("killed")
        console.line(
            "the process was killed (SIGKILL) with \(try await service.pendingMutations().count) in the outbox")

        // Resumed, still offline: the changes shown again; then the API comes back, and the process is killed again
        // while the server holds the answers of changes it applied.
        let resumed = try ChildSample("resume", arguments: arguments(.resume), folder: folder)
        child = resumed
        timeline.mark("restarted")
        guard try await resumed.waitForLine("ready", timeout: .seconds(60)) else {
            return failed(resumed, "the restarted process resumed the outbox")
        }
        console.check(
            shown(by: resumed) == expected,
            "restarted with the API still down, every screen showed its pending changes again (resumeMutations)")
        let appliedBefore = baskets.statistics.appliedKeys.count
        baskets.holdAnswers(fromChange: appliedBefore + max(1, result.changes / 2))
        baskets.isDown = false
        timeline.mark("API back")
        let cameBack = ContinuousClock.now
        try await waitUntil(timeout: .seconds(60)) { baskets.statistics.held > 0 || !resumed.isRunning }
        resumed.kill()
        _ = try await resumed.waitForExit(timeout: .seconds(10))
        baskets.releaseHeldAnswers()
        timeline.mark("killed")
        let heldAnswers = baskets.statistics.held
        console.line(
            "the API came back; the process was killed again after the server applied \(timeline.appliedNow) changes, \(heldAnswers) of them unanswered"
        )
        console.check(heldAnswers > 0, "the server applied changes whose answers never reached the process")

        // Drained: every change once, every screen on the server's state.
        let drain = try ChildSample("drain", arguments: arguments(.drain), folder: folder)
        child = drain
        timeline.mark("restarted")
        guard try await drain.waitForExit(timeout: .seconds(120)), drain.exitStatus == 0 else {
            return failed(drain, "the third process drained the outbox and exited")
        }
        result.drainSeconds = (ContinuousClock.now - cameBack).milliseconds / 1000
        timeline.mark("drained")
        child = nil
        let statistics = baskets.statistics
        let onServer = paths.map { statistics.lines[$0] ?? [] }
        let drained = drain.lines.first { $0.first == "drained" }
        console.check(
            drained?.dropFirst().elementsEqual(["0", "0"]) == true,
            "the outbox drained: nothing pending, nothing refused")
        console.check(
            onServer == expected,
            "the server applied every change exactly once, in the order made on each screen (\(result.changes) changes)"
        )
        console.check(
            statistics.replayed >= heldAnswers,
            "the \(statistics.replayed) changes sent again after the kill carried their first keys, and the server applied none twice"
        )
        let finals = Dictionary(
            drain.lines.filter { $0.first == "final" && $0.count == 3 }.map { (Int($0[1]) ?? -1, Self.decode($0[2])) }
        ) { first, _ in first }
        console.check(
            (0..<settings.mutationScreens).map { finals[$0] ?? nil } == onServer.map { Optional($0) },
            "every screen ended on the server's state")
        console.line(
            String(
                format: "drained %.1f s after the API came back; %d requests refused while it was down",
                result.drainSeconds ?? 0, statistics.refusedWhileDown))
    }

    /// What each screen showed, by the `shown` lines.
    private func shown(by child: ChildSample) -> [[String]] {
        let lines = Dictionary(
            child.lines.filter { $0.first == "shown" && $0.count == 3 }.map { (Int($0[1]) ?? -1, $0[2]) }
        ) { _, last in last }
        return (0..<settings.mutationScreens).map { Self.decode(lines[$0] ?? "[]") ?? [] }
    }

    private func failed(_ child: ChildSample, _ promise: String) {
        child.kill()
        console.check(
            false, "\(promise) (the \(child.name) process: exit \(child.exitStatus.map(String.init) ?? "none"))")
        console.always(child.errors)
    }

    private static func decode(_ json: String) -> [String]? {
        try? JSONDecoder().decode([String].self, from: Data(json.utf8))
    }
}
