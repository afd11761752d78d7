import Foundation
import Testing
import TetherTesting
import TetherTestingTraits

/// The sample's report as a reader sees it: loaded by headless Chromium (Debian's `chromium`; CI installs it and sets
/// `TETHER_REQUIRE_BROWSER=1`, so that a missing browser fails there rather than skipping).
@Suite(
    "The report in a real browser", .needsProcessorTime,
    .enabled(
        if: HeadlessBrowser.found != nil || HeadlessBrowser.required,
        "no Chromium on this machine: `apt-get install chromium`, or set TETHER_BROWSER"))
struct ReportInBrowserTests {
    func browser() throws -> HeadlessBrowser {
        try #require(HeadlessBrowser.found, "TETHER_REQUIRE_BROWSER=1 but no Chromium: install Debian's chromium")
    }

    @Test("The harness can fail: a page's console error and its script's changes are seen")
    func harnessSeesErrors() async throws {
        let browser = try browser()
        try await SampleProcess.withDirectory { directory in
            let page = directory.appendingPathComponent("control.html")
            try """
            <!DOCTYPE html><html><body><p id="before">x</p>
            <script>console.error("deliberate error"); document.body.append(Object.assign(document.createElement("p"), {id: "made"}));</script>
            </body></html>
            """.write(to: page, atomically: true, encoding: .utf8)
            let loaded = try await browser.load(page, in: directory)
            #expect(loaded.console.contains { $0.contains("deliberate error") }, "\(loaded.console)")
            #expect(loaded.dom.contains("id=\"made\""), "the DOM is the rendered one, after scripts")
        }
    }

    @Test("The report loads with no console message; every chart is there with its series, axis titles and a caption")
    func report() async throws {
        let browser = try browser()
        try await SampleProcess.withDirectory { directory in
            try SampleRunTests.shortConfiguration.write(
                to: directory.appendingPathComponent("short.yaml"), atomically: true, encoding: .utf8)
            let run = try await SampleProcess.run(
                ["--config", "short.yaml", "--report", "report.html", "--quiet"], in: directory)
            #expect(run.status == 0, "\(run.output)\n\(run.errors)")
            let page = try await browser.load(directory.appendingPathComponent("report.html"), in: directory)
            #expect(page.console.isEmpty, "console messages: \(page.console)")
            #expect(page.dom.contains("Every promise the sample checks held."))

            let charts = Self.charts(in: page.dom)
            #expect(
                charts.keys.sorted() == [
                    "outbox", "resident", "results-deliver-on-queue", "results-immediate", "results-next-signal",
                ])
            for policy in ["next-signal", "deliver-on-queue", "immediate"] {
                let series = charts["results-\(policy)"] ?? [:]
                #expect(series.keys.sorted() == ["naive", policy].sorted(), "results-\(policy): \(series.keys)")
                for (name, points) in series { #expect(points >= 2, "results-\(policy): \(name) has \(points) points") }
            }
            let resident = charts["resident"] ?? [:]
            #expect(
                resident.keys.sorted() == ["deliver-on-queue", "immediate", "naive", "next-signal", "writer alone"])
            let outbox = charts["outbox"] ?? [:]
            #expect(outbox.keys.sorted() == ["applied by the server", "in the outbox"])
            for (name, points) in outbox { #expect(points >= 10, "outbox: \(name) has \(points) points") }
            #expect(
                page.dom.components(separatedBy: "class=\"marker\"").count - 1 >= 3,
                "the outbox chart marks the API going down, the kills and the restarts, and the drain")
            #expect(
                page.dom.components(separatedBy: "class=\"axis-title\"").count - 1 == 2 * 5, "two axis titles per chart"
            )
            #expect(page.dom.components(separatedBy: "<figcaption").count - 1 == 5, "a sentence under each chart")
        }
    }

    /// Each chart's series, by `data-chart` and `data-series`, with how many points each draws.
    static func charts(in dom: String) -> [String: [String: Int]] {
        var charts: [String: [String: Int]] = [:]
        for svg in dom.components(separatedBy: "<svg ").dropFirst() {
            guard let chart = attribute("data-chart", in: svg) else { continue }
            var series: [String: Int] = [:]
            for polyline in svg.components(separatedBy: "<polyline ").dropFirst() {
                guard let name = attribute("data-series", in: polyline), let points = attribute("points", in: polyline)
                else {
                    continue
                }
                series[name] = points.split(separator: " ").count
            }
            charts[chart] = series
        }
        return charts
    }

    static func attribute(_ name: String, in text: String) -> String? {
        guard let start = text.range(of: "\(name)=\"") else { return nil }
        guard let end = text[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(text[start.upperBound..<end])
    }
}
