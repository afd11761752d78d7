import Foundation

/// Writes `tether-report.html`: one self-contained page (no external assets) with the scenario tables, for each
/// delivery policy an SVG chart of the consumer's results alive against the naive pattern's, and one of resident
/// memory for every run.
struct Report {
    let configurationFile: String
    let baseURL: String
    let persistence: PersistenceScenario.Result
    let ownership: OwnershipScenario.Result
    let backPressure: BackPressureScenario.Outcome
    let mutations: MutationsScenario.Result
    let mirror: MirrorScenario.Result
    let failures: [String]
    let generated: Date

    func html() -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>Tether sample report</title>
        <style>
        body { font: 15px/1.5 -apple-system, system-ui, sans-serif; margin: 2em auto; max-width: 980px; color: #222; padding: 0 1em; }
        h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
        table { border-collapse: collapse; margin: 1em 0; } th, td { padding: 4px 10px; border: 1px solid #ddd; text-align: right; }
        th:first-child, td:first-child { text-align: left; } th { background: #f4f4f4; }
        .ok { color: #1a7f37; } .bad { color: #c62828; } .meta { color: #666; }
        figure { margin: 1.5em 0; } figcaption { color: #444; max-width: 900px; }
        </style>
        </head>
        <body>
        <h1>Tether sample report</h1>
        <p class="meta">Generated \(escape(ISO8601DateFormatter().string(from: generated))) from \(escape(configurationFile)); server \(escape(baseURL)); \(escape(persistence.persistence)).</p>
        <p class="\(failures.isEmpty ? "ok" : "bad")">\(failures.isEmpty ? "Every promise the sample checks held." : "Broken promises: " + failures.map(escape).joined(separator: "; "))</p>

        <h2>Back pressure: results alive over time</h2>
        <p>A fast writer updates the <code>items</code> collection while a slow consumer observes <code>store_id == 'abc123'</code>:
        \(backPressure.calibration.writes) commits per run; each result is the query's documents turned into a view model, and the consumer takes
        \(String(format: "%.1f", backPressure.calibration.consumerDelay.milliseconds)) ms to render one — \(String(format: "%.0f", Double(backPressure.calibration.consumerDelay.milliseconds / max(backPressure.calibration.resultIntervalMilliseconds, 0.001)))) times
        the interval at which this machine offered results in a calibration run. Results alive are counted by their <code>deinit</code>.</p>
        \(backPressure.policies.map(resultsChart).joined(separator: "\n"))
        \(residentChart())
        \(backPressureTable())

        <h2>Ownership and eviction</h2>
        \(ownershipTable())

        <h2>Persistence</h2>
        \(persistenceTable())

        <h2>Mutations: offline, killed, resumed</h2>
        \(mutationsSection())

        <h2>Mirrors: remote data, queried locally</h2>
        \(mirrorSection())
        </body>
        </html>
        """
    }

    func write(to path: String) throws {
        try html().write(toFile: path, atomically: true, encoding: .utf8)
    }

    private static let policyColor = "#1565c0", naiveColor = "#c62828", storeColor = "#888888"

    private static func seconds(_ samples: [MemorySampler.Sample], _ value: (MemorySampler.Sample) -> Double) -> [(
        Double, Double
    )] {
        samples.map { ($0.milliseconds / 1000, value($0)) }
    }

    /// One policy against the naive pattern: megabytes of the consumer's results alive.
    private func resultsChart(_ run: BackPressureScenario.Run) -> String {
        let naive = backPressure.naive
        var series =
            naive.map {
                [
                    LineChart.Series(
                        name: "naive", color: Self.naiveColor, points: Self.seconds($0.samples) { $0.resultMegabytes })
                ]
            } ?? []
        series.append(
            .init(
                name: run.policy, color: Self.policyColor, points: Self.seconds(run.samples) { $0.resultMegabytes },
                emphasised: true))
        let chart = LineChart(
            identifier: "results-\(run.policy)", label: "Results alive over time: \(run.policy) against naive",
            xTitle: "seconds since the writer started", yTitle: "results alive (MB)", series: series,
            yTick: { "\(LineChart.format($0)) MB" }, xTick: { "\(LineChart.format($0)) s" })
        let held = backPressure.contrastHeld
        let sentence =
            naive.map { naive in
                String(
                    format:
                        "Under %@ the consumer never held more than %d result%@ (%.2f MB) — a flat line — while the naive pattern piled up to %d (%.1f MB) and took %.1f s after the last write to reach the final state, against %.0f ms. ",
                    run.policy, run.mostResults, run.mostResults == 1 ? "" : "s", run.mostResultMegabytes,
                    naive.mostResults, naive.mostResultMegabytes,
                    naive.finalStateMilliseconds / 1000, run.finalStateMilliseconds)
                    + (held
                        ? "Held: the contrast is at least \(BackPressureScenario.contrastFactor) times, in count and bytes."
                        : "NOT held: the naive pattern did not pile up by a clear factor.")
            } ?? "No naive run to compare with."
        return """
            <figure>
            \(chart.svg())
            <figcaption class="\(held ? "ok" : "bad")">\(escape(sentence))</figcaption>
            </figure>
            """
    }

    /// Resident memory above each run's start, with the writer alone for the store's own growth.
    private func residentChart() -> String {
        let alone = backPressure.writerAlone
        var series = [
            LineChart.Series(
                name: "writer alone", color: Self.storeColor,
                points: Self.seconds(alone.samples) { $0.megabytes - alone.baselineMegabytes })
        ]
        let colors = [
            "next-signal": "#1565c0", "deliver-on-queue": "#2e7d32", "immediate": "#6a1b9a", "naive": Self.naiveColor,
        ]
        for run in backPressure.runs {
            series.append(
                .init(
                    name: run.policy, color: colors[run.policy] ?? "#000",
                    points: Self.seconds(run.samples) { $0.megabytes - run.baselineMegabytes },
                    emphasised: run.policy != "naive"))
        }
        let chart = LineChart(
            identifier: "resident", label: "Resident memory over time, every run",
            xTitle: "seconds since the writer started", yTitle: "resident memory above the run's start (MB)",
            series: series,
            yTick: { "+\(LineChart.format($0)) MB" }, xTick: { "\(LineChart.format($0)) s" })
        let policiesPeak = backPressure.policies.map(\.peakDeltaMegabytes).max() ?? 0
        let sentence = String(
            format:
                "Resident memory mixes in the store's page cache and WAL and what the allocator keeps: the writer alone, with no observer, grew it by %.1f MB; the policies by at most %.1f MB; the naive pattern by %.1f MB. The allocator keeps freed memory for reuse, so the naive line stays up after its results are gone; the chart above counts the results themselves.",
            alone.peakDeltaMegabytes, policiesPeak, backPressure.naive?.peakDeltaMegabytes ?? 0)
        return """
            <figure>
            \(chart.svg())
            <figcaption>\(escape(sentence))</figcaption>
            </figure>
            """
    }

    private func backPressureTable() -> String {
        var rows = ""
        for run in backPressure.runs {
            rows +=
                "<tr><td>\(escape(run.policy))</td><td>\(run.writes)</td><td>\(String(format: "%.0f", run.writerMilliseconds))</td>"
                + "<td>\(run.offered)</td><td>\(run.deliveries)</td><td>\(run.coalesced)</td><td>\(run.mostResults)</td>"
                + "<td>\(String(format: "%.2f", run.mostResultMegabytes))</td><td>\(String(format: "%.1f", run.peakDeltaMegabytes))</td>"
                + "<td>\(String(format: "%.0f", run.finalStateMilliseconds))</td>"
                + "<td class=\"\(run.finalStateCorrect ? "ok" : "bad")\">\(run.finalStateCorrect ? "yes" : "no")</td></tr>\n"
        }
        let alone = backPressure.writerAlone
        rows +=
            "<tr><td>writer alone</td><td>\(alone.writes)</td><td>\(String(format: "%.0f", alone.writerMilliseconds))</td>"
            + "<td>–</td><td>–</td><td>–</td><td>–</td><td>–</td><td>\(String(format: "%.1f", alone.peakDeltaMegabytes))</td><td>–</td><td>–</td></tr>\n"
        return """
            <table>
            <tr><th>Delivery</th><th>Writes</th><th>Writer ms</th><th>Results offered</th><th>Processed</th><th>Coalesced</th><th>Most alive</th><th>Most alive MB</th><th>Resident +MB</th><th>Final state after ms</th><th>Final state right</th></tr>
            \(rows)</table>
            """
    }

    private func ownershipTable() -> String {
        let flavours = ownership.flavours.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(
            separator: ", ")
        let served = ownership.listLoadsServed.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(
            separator: ", ")
        return """
            <table>
            <tr><th>Measure</th><th>Value</th></tr>
            <tr><td>Screens opened</td><td>\(ownership.screens) (\(escape(flavours)))</td></tr>
            <tr><td>Resources alive, then observed</td><td>\(ownership.aliveAfterOpening), \(ownership.observedAfterOpening)</td></tr>
            <tr><td>List loads served per store</td><td>\(escape(served.isEmpty ? "(external server)" : served))</td></tr>
            <tr><td>Screens closed</td><td>\(ownership.closedScreens)</td></tr>
            <tr><td>Owner-held observers deallocated with them</td><td>\(ownership.observersReleased)</td></tr>
            <tr><td>ResourceModels showing content, then released with their screens</td><td>\(ownership.modelsShowingContent) of \(ownership.models), then \(ownership.modelsReleased) of \(ownership.modelsClosed)</td></tr>
            <tr><td>Resources let go under memory pressure</td><td>\(ownership.evicted)</td></tr>
            <tr><td>Resources alive afterwards (all observed)</td><td>\(ownership.aliveAfterPressure)</td></tr>
            </table>
            """
    }

    private func persistenceTable() -> String {
        """
        <table>
        <tr><th>Measure</th><th>Value</th></tr>
        <tr><td>Cached list at start</td><td>\(persistence.cacheHit ? "yes" : "no (first run)")</td></tr>
        <tr><td>Cached data shown after</td><td>\(persistence.cacheMilliseconds.map { String(format: "%.1f ms", $0) } ?? "–")</td></tr>
        <tr><td>Network answer</td><td>\(escape(persistence.networkAnswer)) after \(String(format: "%.1f ms", persistence.networkMilliseconds))</td></tr>
        <tr><td>Events</td><td>\(escape(persistence.events.joined(separator: " → ")))</td></tr>
        <tr><td>Documents kept from the last run</td><td>\(persistence.storedDocuments)</td></tr>
        </table>
        """
    }

    /// The outbox over time, through two kills, against the changes the server applied.
    private func mutationsSection() -> String {
        if let reason = mutations.skipped { return "<p>Not run: \(escape(reason)).</p>" }
        let chart = LineChart(
            identifier: "outbox", label: "The outbox over time, through two kills",
            xTitle: "seconds since the API went down", yTitle: "mutations",
            series: [
                .init(name: "applied by the server", color: "#2e7d32", points: mutations.applied),
                .init(name: "in the outbox", color: Self.policyColor, points: mutations.outbox, emphasised: true),
            ],
            yTick: { LineChart.format($0) }, xTick: { "\(LineChart.format($0)) s" },
            markers: mutations.events.map { ($0.seconds, $0.label) })
        let sentence = String(
            format:
                "%d screens made %d changes with the API down: each shown at once and written to the outbox before mutate returned. The process was killed with SIGKILL, restarted (the screens showed the pending changes again), killed again once the API was back while the server held the answers of changes it had applied, and restarted. The outbox drained %.1f s after the API came back; the server saw %d changes again under keys it had applied, answered them as before and applied none twice.",
            mutations.screens, mutations.changes, mutations.drainSeconds ?? 0, mutations.replayed)
        let events = mutations.events.map { String(format: "%.2f s %@", $0.seconds, $0.label) }
        return """
            <figure>
            \(chart.svg())
            <figcaption>\(escape(sentence))</figcaption>
            </figure>
            <table>
            <tr><th>Measure</th><th>Value</th></tr>
            <tr><td>Screens, changes</td><td>\(mutations.screens), \(mutations.changes)</td></tr>
            <tr><td>Events</td><td>\(escape(events.joined(separator: " → ")))</td></tr>
            <tr><td>Requests refused while the API was down</td><td>\(mutations.refusedWhileDown)</td></tr>
            <tr><td>Changes sent again, applied once</td><td>\(mutations.replayed)</td></tr>
            <tr><td>Drained after the API came back</td><td>\(mutations.drainSeconds.map { String(format: "%.1f s", $0) } ?? "–")</td></tr>
            <tr><td>Left by an earlier run, sent first</td><td>\(mutations.leftovers)</td></tr>
            </table>
            """
    }

    /// Each refresh of the mirrored catalog: what the server did, what the refresh wrote, what the screen showed.
    private func mirrorSection() -> String {
        if let reason = mirror.skipped { return "<p>Not run: \(escape(reason)).</p>" }
        let start =
            mirror.syncedSecondsAgo.map {
                String(
                    format:
                        "At start the screen showed %d items from the store alone, before any request: what the last run mirrored %.0f s earlier.",
                    mirror.shownAtStart, $0)
            } ?? "At start the store held no catalog (a first run)."
        let sentence =
            "The demo API's catalogs are mirrored into one collection, a mirror per store, each with its scope; a screen observes <code>\(escape(mirror.query))</code> under next-signal. The API changes the catalog behind the sample's back, and each row is one refresh. \(escape(start)) While the screen was busy with one result, \(mirror.burstChanges) more changes came: it rendered \(mirror.burstRendered) result(s), the last the store's final state. With the API down, its status line, read from the mirror's state in the store: “\(escape(mirror.offlineStatus))”."
        let rows = mirror.rounds.map { round in
            "<tr><td>\(escape(round.label))</td><td>\(escape(round.serverChange))</td><td>\(escape(round.answer))</td><td>\(round.commits)</td><td>\(round.mirrored)</td><td>\(round.rendered)</td><td>\(round.shown)</td><td>\(String(format: "%.1f ms", round.milliseconds))</td><td class=\"\(round.right ? "ok" : "bad")\">\(round.right ? "yes" : "NO")</td></tr>"
        }
        return """
            <p>\(sentence)</p>
            <table>
            <tr><th>Step</th><th>On the server</th><th>Refresh</th><th>Commits</th><th>Mirrored</th><th>Results rendered</th><th>On the screen</th><th>Screen up to date after</th><th>Right</th></tr>
            \(rows.joined(separator: "\n"))
            </table>
            """
    }

    private func escape(_ text: String) -> String {
        LineChart.escape(text)
    }
}
