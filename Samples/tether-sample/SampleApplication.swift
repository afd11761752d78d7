import Foundation
import PipelineKit
import ResourceKit
import ServiceLifecycle
import TetherConcurrency
import TetherInspector

/// The scenarios, run as the application service of the pipeline's `ServiceGroup`: the background parts start
/// before it and shut down after it returns. SIGINT or SIGTERM cancels the scenarios; the group then shuts the rest
/// down in reverse, the database last.
struct SampleApplication: ServiceLifecycle.Service {
    let pipeline: AssembledPipeline
    let settings: SampleSettings
    let server: DemoServer?
    let console: Console
    let configurationFile: String
    let reportPath: String
    /// With a duration, the soak instead of one pass.
    let soak: Duration?
    /// With `--inspect`: served while the scenarios run, and afterwards until the group shuts down.
    let inspector: Inspector?
    /// Set when a signal cut the scenarios short.
    let interrupted = LockedValue(false)

    func run() async throws {
        let interrupted = interrupted
        do {
            try await withGracefulShutdownHandler {
                try await cancelWhenGracefulShutdown {
                    guard let inspector else { return try await self.scenarios() }
                    try await self.inspecting(inspector)
                }
            } onGracefulShutdown: {
                interrupted.withLock { $0 = true }
            }
        } catch  where error is CancellationError || interrupted.withLock({ $0 }) {
            // Whatever the scenarios were doing when they were cancelled (a write, a request) ends here.
            interrupted.withLock { $0 = true }
            console.always(
                "\ninterrupted: stopping the scenarios, then the monitor, the HTTP client and the database, in that order"
            )
        }
    }

    /// Runs the scenarios with the inspector serving, then keeps a few screens on show until cancelled (Ctrl-C).
    private func inspecting(_ inspector: Inspector) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await inspector.run() }
            guard let port = await inspector.port() else { return }
            console.always("Inspector: http://127.0.0.1:\(port)/ (loopback only)")
            try await scenarios()
            let screens = try InspectedScreens(
                pipeline: pipeline, service: try pipeline.service(named: settings.service),
                liveQuery: settings.liveQuery)
            console.always("Inspecting: http://127.0.0.1:\(port)/ — press Ctrl-C to stop")
            try await gracefulShutdown()
            withExtendedLifetime(screens) {}
        }
    }

    private func scenarios() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let service = try pipeline.service(named: settings.service)
        if let soak {
            console.section(
                "Soak: \(Int(soak.milliseconds / 1000)) s of ownership churn, memory pressure, server faults and back pressure"
            )
            let result = try await SoakScenario(
                pipeline: pipeline, service: service, settings: settings, server: server, console: console,
                duration: soak
            ).run()
            console.always(
                String(
                    format: "Soak: %d rounds in %.0f s · slope %+.3f MB/min after %.0f s · %@",
                    result.rounds, result.seconds, result.slopeMegabytesPerMinute, result.warmUpSeconds,
                    console.failures.isEmpty ? "every check passed" : "\(console.failures.count) check(s) FAILED"))
            return
        }
        let baseURL = service.baseURL?.absoluteString ?? "(none)"

        console.section("2. Persistence: the cached list, then revalidation")
        let persistence = try await PersistenceScenario(pipeline: pipeline, service: service, console: console).run()

        console.section("3. Ownership and eviction")
        let ownership = await OwnershipScenario(
            pipeline: pipeline, service: service, settings: settings, server: server, console: console
        ).run()

        console.section("4. Back pressure: a fast writer, a slow consumer")
        let backPressure = try await BackPressureScenario(pipeline: pipeline, settings: settings, console: console)
            .run()

        console.section("5. Mutations: offline, killed, resumed")
        let mutations = try await MutationsScenario(
            pipeline: pipeline, service: service, settings: settings, server: server, console: console,
            configurationFile: configurationFile
        ).run()

        console.section("6. Mirrors: remote data, queried locally")
        let mirror = try await MirrorScenario(pipeline: pipeline, settings: settings, server: server, console: console)
            .run()

        let report = Report(
            configurationFile: configurationFile, baseURL: baseURL, persistence: persistence, ownership: ownership,
            backPressure: backPressure, mutations: mutations, mirror: mirror, failures: console.failures,
            generated: Date())
        do {
            try report.write(to: reportPath)
        } catch {
            console.check(false, "the report was written to \(reportPath) (\(error))")
        }
        Summary(
            persistence: persistence, ownership: ownership, backPressure: backPressure, mutations: mutations,
            mirror: mirror, server: server
        ).print(to: console)
        console.always(
            String(
                format: "Report: %@ · %@ · %.1f s", reportPath,
                console.failures.isEmpty ? "every check passed" : "\(console.failures.count) check(s) FAILED",
                (clock.now - start).milliseconds / 1000))
    }
}

/// The table printed at the end.
struct Summary {
    let persistence: PersistenceScenario.Result
    let ownership: OwnershipScenario.Result
    let backPressure: BackPressureScenario.Outcome
    let mutations: MutationsScenario.Result
    let mirror: MirrorScenario.Result
    let server: DemoServer?

    func print(to console: Console) {
        var rows: [[String]] = [
            [
                "Delivery", "Offered", "Processed", "Coalesced", "Most alive", "Alive MB", "Resident +MB",
                "Final state after", "Right",
            ]
        ]
        for run in backPressure.runs {
            rows.append([
                run.policy, "\(run.offered)", "\(run.deliveries)", "\(run.coalesced)", "\(run.mostResults)",
                String(format: "%.1f", run.mostResultMegabytes), String(format: "%.1f", run.peakDeltaMegabytes),
                String(format: "%.0f ms", run.finalStateMilliseconds), run.finalStateCorrect ? "yes" : "NO",
            ])
        }
        let alone = backPressure.writerAlone
        rows.append([alone.policy, "–", "–", "–", "–", "–", String(format: "%.1f", alone.peakDeltaMegabytes), "–", "–"])
        console.always("\nSummary")
        console.always(Self.table(rows))
        console.always(
            "Ownership: \(ownership.screens) screens, \(ownership.closedScreens) closed; \(ownership.evicted) resources let go under pressure, \(ownership.aliveAfterPressure) kept (all observed)"
        )
        console.always(
            "Persistence: "
                + (persistence.cacheHit
                    ? String(
                        format: "cached list after %.1f ms, then %@", persistence.cacheMilliseconds ?? 0,
                        persistence.networkAnswer)
                    : "first run, list fetched (\(persistence.networkAnswer)) and cached; run again to see it restored")
        )
        console.always(
            "Mutations: "
                + (mutations.skipped.map { "not run (\($0))" }
                    ?? String(
                        format:
                            "%d changes made offline, through two kills; drained %.1f s after the API came back, each applied once (%d sent again, recognised by key)",
                        mutations.changes, mutations.drainSeconds ?? 0, mutations.replayed)))
        console.always(
            "Mirrors: "
                + (mirror.skipped.map { "not run (\($0))" }
                    ?? (mirror.syncedSecondsAgo.map {
                        String(
                            format: "%d items shown at start from the store, mirrored %.0f s earlier; ",
                            mirror.shownAtStart, $0)
                    } ?? "")
                        + "the screen followed \(mirror.rounds.count) refreshes of the mirrored catalog (\(mirror.rounds.filter(\.right).count) right); \(mirror.burstChanges) changes while it was busy gave \(mirror.burstRendered) results")
        )
        if let statistics = server?.statistics {
            console.always(
                "Demo server: \(statistics.requests) requests, \(statistics.notModified) answered 304, \(statistics.failed) answered 503 (retried), \(statistics.slow) slow"
            )
        }
    }

    static func table(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        func line(_ row: [String]) -> String {
            row.enumerated().map { index, cell in
                index == 0
                    ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[index] - cell.count) + cell
            }.joined(separator: "  ")
        }
        let rule = widths.map { String(repeating: "─", count: $0) }.joined(separator: "  ")
        return ([line(rows[0]), rule] + rows.dropFirst().map(line)).joined(separator: "\n")
    }
}
