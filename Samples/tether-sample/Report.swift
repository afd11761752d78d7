import Foundation

/// Writes `tether-report.html`: one self-contained page (no external assets) with the scenario tables and, for
/// each delivery policy, an SVG chart of resident memory over time against the naive pattern's.
struct Report {
    let configurationFile: String
    let baseURL: String
    let persistence: PersistenceScenario.Result
    let ownership: OwnershipScenario.Result
    let backPressure: [BackPressureScenario.Run]
    let failures: [String]
    let generated: Date

    func html() -> String {
        let naive = backPressure.first { $0.policy == "naive" }
        let charts = backPressure.filter { $0.policy != "naive" }.map { chart($0, against: naive) }.joined(separator: "\n")
        return """
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
            figure { margin: 1.5em 0; } figcaption { color: #555; }
            </style>
            </head>
            <body>
            <h1>Tether sample report</h1>
            <p class="meta">Generated \(escape(ISO8601DateFormatter().string(from: generated))) from \(escape(configurationFile)); server \(escape(baseURL)); \(escape(persistence.persistence)).</p>
            <p class="\(failures.isEmpty ? "ok" : "bad")">\(failures.isEmpty ? "Every promise the sample checks held." : "Broken promises: " + failures.map(escape).joined(separator: "; "))</p>

            <h2>Back pressure: memory over time</h2>
            <p>A fast writer updates the <code>items</code> collection while a slow consumer observes <code>store_id == 'abc123'</code>.
            Each chart shows resident memory under one delivery policy (blue) and under the naive pattern, which dispatches every change to the consumer's queue (red).</p>
            \(charts)
            \(backPressureTable())

            <h2>Ownership and eviction</h2>
            \(ownershipTable())

            <h2>Persistence</h2>
            \(persistenceTable())
            </body>
            </html>
            """
    }

    func write(to path: String) throws {
        try html().write(toFile: path, atomically: true, encoding: .utf8)
    }

    private func chart(_ run: BackPressureScenario.Run, against naive: BackPressureScenario.Run?) -> String {
        let width = 900.0, height = 260.0, left = 60.0, bottom = 36.0, top = 14.0, right = 16.0
        let series = [run] + (naive.map { [$0] } ?? [])
        let maxTime = max(series.compactMap { $0.samples.last?.milliseconds }.max() ?? 1, 1)
        let deltas = series.flatMap { run in run.samples.map { $0.megabytes - run.baselineMegabytes } }
        let maxDelta = max((deltas.max() ?? 1) * 1.1, 1)
        func x(_ milliseconds: Double) -> Double { left + milliseconds / maxTime * (width - left - right) }
        func y(_ megabytes: Double) -> Double { height - bottom - max(megabytes, 0) / maxDelta * (height - bottom - top) }
        func line(_ run: BackPressureScenario.Run, color: String) -> String {
            let points = run.samples.map { String(format: "%.1f,%.1f", x($0.milliseconds), y($0.megabytes - run.baselineMegabytes)) }
            return "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(points.joined(separator: " "))\"><title>\(escape(run.policy))</title></polyline>"
        }
        var grid = ""
        for step in 0...4 {
            let value = maxDelta * Double(step) / 4
            grid += String(format: "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>", left, width - right, y(value), y(value))
            grid += String(format: "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" fill=\"#666\">+%.1f MB</text>", left - 6, y(value) + 4, value)
            let time = maxTime * Double(step) / 4
            grid += String(format: "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\" fill=\"#666\">%.1f s</text>", x(time), height - bottom + 16, time / 1000)
        }
        let legend = "<text x=\"\(Int(left) + 8)\" y=\"\(Int(top) + 12)\" font-size=\"12\" fill=\"#1565c0\">\(escape(run.policy))</text>"
            + (naive == nil ? "" : "<text x=\"\(Int(left) + 8)\" y=\"\(Int(top) + 28)\" font-size=\"12\" fill=\"#c62828\">naive</text>")
        return """
            <figure>
            <svg class="chart" data-policy="\(escape(run.policy))" xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="Resident memory over time: \(escape(run.policy)) against naive">
            \(grid)
            <line x1="\(Int(left))" x2="\(Int(left))" y1="\(Int(top))" y2="\(Int(height - bottom))" stroke="#999"/>
            <line x1="\(Int(left))" x2="\(Int(width - right))" y1="\(Int(height - bottom))" y2="\(Int(height - bottom))" stroke="#999"/>
            \(naive.map { line($0, color: "#c62828") } ?? "")
            \(line(run, color: "#1565c0"))
            \(legend)
            </svg>
            <figcaption>\(escape(run.policy)): peak +\(String(format: "%.1f", run.peakDeltaMegabytes)) MB, at most \(run.maxWaiting) results held\(naive.map { String(format: "; naive: peak +%.1f MB, up to %d changes queued", $0.peakDeltaMegabytes, $0.maxWaiting) } ?? "").</figcaption>
            </figure>
            """
    }

    private func backPressureTable() -> String {
        var rows = ""
        for run in backPressure {
            rows += "<tr><td>\(escape(run.policy))</td><td>\(run.writes)</td><td>\(String(format: "%.0f", run.writerMilliseconds))</td>"
                + "<td>\(run.deliveries)</td><td>\(run.coalesced)</td><td>\(run.maxWaiting)</td>"
                + "<td>\(String(format: "%.1f", run.peakDeltaMegabytes))</td><td>\(String(format: "%.0f", run.finalStateMilliseconds))</td>"
                + "<td class=\"\(run.finalStateCorrect ? "ok" : "bad")\">\(run.finalStateCorrect ? "yes" : "no")</td></tr>\n"
        }
        return """
            <table>
            <tr><th>Delivery</th><th>Writes</th><th>Writer ms</th><th>Results processed</th><th>Coalesced</th><th>Most waiting</th><th>Peak memory +MB</th><th>Final state after ms</th><th>Final state right</th></tr>
            \(rows)</table>
            """
    }

    private func ownershipTable() -> String {
        let flavours = ownership.flavours.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let served = ownership.listLoadsServed.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        return """
            <table>
            <tr><th>Measure</th><th>Value</th></tr>
            <tr><td>Screens opened</td><td>\(ownership.screens) (\(escape(flavours)))</td></tr>
            <tr><td>Resources alive, then observed</td><td>\(ownership.aliveAfterOpening), \(ownership.observedAfterOpening)</td></tr>
            <tr><td>List loads served per store</td><td>\(escape(served.isEmpty ? "(external server)" : served))</td></tr>
            <tr><td>Screens closed</td><td>\(ownership.closedScreens)</td></tr>
            <tr><td>Owner-held observers deallocated with them</td><td>\(ownership.observersReleased)</td></tr>
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

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
