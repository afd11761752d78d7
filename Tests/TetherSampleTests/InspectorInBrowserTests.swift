import Foundation
import Testing
import TetherTesting
import TetherTestingTraits

/// `tether-sample --inspect`: the inspector's page, in headless Chromium, against the running sample — once its
/// scenarios are done and its screens are on show.
@Suite(
    "The sample's inspector in a real browser", .needsProcessorTime,
    .enabled(
        if: HeadlessBrowser.found != nil || HeadlessBrowser.required,
        "no Chromium on this machine: `apt-get install chromium`, or set TETHER_BROWSER"))
struct InspectorInBrowserTests {
    @Test("The page loads with no console message and shows the screens on show, their resource and live query")
    func inspectedSample() async throws {
        let browser = try #require(
            HeadlessBrowser.found, "TETHER_REQUIRE_BROWSER=1 but no Chromium: install Debian's chromium")
        try await SampleProcess.withDirectory { directory in
            try SampleRunTests.shortConfiguration.write(
                to: directory.appendingPathComponent("short.yaml"), atomically: true, encoding: .utf8)
            var page: HeadlessBrowser.Page?
            // The page is loaded while the sample shows its screens; then the sample is interrupted (Ctrl-C).
            let run = try await SampleProcess.run(
                ["--config", "short.yaml", "--report", "report.html", "--quiet", "--inspect"], in: directory
            ) { output in
                guard output.contains("Inspecting: "),
                    let range = output.range(of: #"http://127\.0\.0\.1:\d+/"#, options: .regularExpression)
                else { return false }
                page = try? await browser.load(url: String(output[range]), in: directory, budget: .seconds(3))
                return true
            }
            #expect(run.status == 130, "stopped by Ctrl-C\n\(run.output)\n\(run.errors)")
            #expect(run.output.contains("Inspector: http://127.0.0.1:"), "the address is printed as it starts")
            let loaded = try #require(page, "the page loaded")
            #expect(loaded.console.isEmpty, "\(loaded.console)")
            #expect(loaded.dom.contains("data-loaded=\"true\""))
            #expect(loaded.dom.contains("<td data-field=\"type\">InspectedScreen</td>"))
            #expect(loaded.dom.contains("<td data-field=\"observations\" class=\"number\">3</td>"))
            #expect(loaded.dom.contains("<td data-field=\"query\">store_id == $args.store</td>"))
            #expect(loaded.dom.contains("self-owned InspectedScreen"))
        }
    }
}
