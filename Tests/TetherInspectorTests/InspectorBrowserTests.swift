import Foundation
import Testing
import TetherInspector
import TetherTesting
import TetherTestingTraits

/// The page in a real browser (headless Chromium) against the scripted scenario: it loads with no console message,
/// its tables show the scenario's figures, and a `<script>` in a query's text is shown as text, never run.
/// A headless browser loads every core for a moment: not beside tests whose deadlines or demonstrations assume a
/// fair share of the processor (the sample's runs).
@Suite(
    "Inspector: the page in a browser", .timeLimit(minutes: 2), .loadsEveryCore,
    .enabled(
        if: HeadlessBrowser.found != nil || HeadlessBrowser.required,
        "no Chromium on this machine: `apt-get install chromium`, or set TETHER_BROWSER"))
struct InspectorBrowserTests {
    /// The page of an inspector on the scenario, after a second of its polling (virtual time).
    static func page(of scenario: InspectorScenario) async throws -> HeadlessBrowser.Page {
        let browser = try #require(
            HeadlessBrowser.found, "TETHER_REQUIRE_BROWSER=1 but no Chromium: install Debian's chromium")
        return try await scenario.withInspector { _, port in
            try await TemporaryDirectory.with { directory in
                try await browser.load(
                    url: "http://127.0.0.1:\(port)/", in: URL(fileURLWithPath: directory.path), budget: .seconds(3))
            }
        }
    }

    @Test("The page renders the resources, live queries and owners, with no console message")
    func rendersTheScenario() async throws {
        let scenario = try await InspectorScenario()
        let page = try await Self.page(of: scenario)
        let (dom, console) = (page.dom, page.console)
        #expect(console.isEmpty, "console: \(console)")
        #expect(dom.contains("data-loaded=\"true\""), "the page fetched and rendered the API's document")
        #expect(dom.contains("<p id=\"errors\" class=\"errors\" hidden=\"\">"), "no script error was reported")
        for path in ["/profile", "/feed", "/kept", "/unused"] {
            #expect(dom.contains("data-url=\"\(InspectorScenario.base)\(path)\""), "a row for \(path)")
        }
        #expect(
            dom.contains("<td data-field=\"data\">text/plain; charset=utf-8, 5 B, 5 s old, ETag \"v1\", fresh</td>"))
        #expect(dom.contains("self-owned ProfileScreen"))
        #expect(dom.contains("closure owned by ProfileScreen (gone)"))
        #expect(dom.contains("<td data-field=\"observations\" class=\"number\">3</td>"), "3 ProfileScreen observations")
        #expect(dom.contains("<td data-field=\"oldest\" class=\"number\">0 s</td>"), "the clock has not moved")
        #expect(dom.contains("<li data-service=\"api\">api: 0 events, 0 resources released</li>"))
        #expect(dom.contains("closure owned by ProfileScreen, ExecutorDeliveryPolicy, "))
        #expect(dom.contains("<td data-field=\"commit\">5 of 5</td>"))
        // The store's statistics, each from its field of the API's document (a misspelt field would show nothing).
        for field in ["reruns", "computedAhead", "aheadLeftToSignal", "aheadLeftWhileWriting", "quietCatchUps"] {
            #expect(dom.contains("<td data-field=\"\(field)\" class=\"number\">0</td>"), "\(field) shown")
        }
        #expect(dom.contains("<td data-field=\"deferrals\" class=\"number\">"))
        #expect(dom.contains("busy, waiting: 5 documents (120 B) at commit 5, 0 s old, 2 commits behind"))
        #expect(dom.contains("<li>\(InspectorScenario.base)/kept</li>"), "kept only from outside")
        withExtendedLifetime(scenario) {}
    }

    @Test("A <script> in a query's text is rendered as text: escaped in the DOM, never run")
    func escapesHostileText() async throws {
        let scenario = try await InspectorScenario()
        let page = try await Self.page(of: scenario)
        let (dom, console) = (page.dom, page.console)
        #expect(console.isEmpty, "console: \(console)")
        #expect(dom.contains("&lt;script&gt;document.title=\"pwned\"&lt;/script&gt;"), "shown, escaped")
        #expect(!dom.contains("<script>document.title"), "never markup")
        #expect(dom.contains("<title>Tether inspector</title>"), "the script did not run")
        withExtendedLifetime(scenario) {}
    }
}
