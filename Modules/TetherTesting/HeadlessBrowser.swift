public import Foundation

/// A page as headless Chromium renders it: its DOM after loading, and every console message the page produced. For
/// the tests that load a page in a real browser (the sample's report, the inspector); `.ci/run` installs Debian's
/// `chromium`.
public struct HeadlessBrowser: Sendable {
    /// A loaded page.
    public struct Page: Sendable {
        /// The serialized DOM after load.
        public var dom: String
        /// Console messages ("message", source: …), in order.
        public var console: [String]
    }

    /// The browser's executable.
    public let executable: URL

    /// Chromium, from `TETHER_BROWSER` or the first of Debian's and Google's names on the `PATH`.
    public static let found: HeadlessBrowser? = {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["TETHER_BROWSER"], FileManager.default.isExecutableFile(atPath: path) {
            return HeadlessBrowser(executable: URL(fileURLWithPath: path))
        }
        let folders = (environment["PATH"] ?? "/usr/bin").split(separator: ":").map(String.init)
        for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
            for folder in folders where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
                return HeadlessBrowser(executable: URL(fileURLWithPath: "\(folder)/\(name)"))
            }
        }
        return nil
    }()

    /// Whether a missing browser fails the tests instead of leaving them out (CI sets `TETHER_REQUIRE_BROWSER=1`).
    public static var required: Bool { ProcessInfo.processInfo.environment["TETHER_REQUIRE_BROWSER"] == "1" }

    /// Loads `file` and returns its DOM and console messages.
    public func load(_ file: URL, in directory: URL) async throws -> Page {
        try await load(url: file.absoluteString, in: directory)
    }

    /// Loads `url` (a page served over HTTP, say) and returns its DOM and console messages. With `budget`, the page's
    /// scripts — its fetches and timers included — run for that much virtual time before the DOM is taken.
    public func load(url: String, in directory: URL, budget: Duration? = nil) async throws -> Page {
        var arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--user-data-dir=\(directory.path)/chromium-profile", "--enable-logging=stderr", "--v=0", "--dump-dom",
        ]
        if let budget { arguments.append("--virtual-time-budget=\(budget.components.seconds * 1000)") }
        let child = try ChildProcess(executable, arguments + [url], in: directory)
        _ = await child.waitForExit(within: .seconds(120))
        let log = child.errors
        // Chromium logs each console message as `[…:INFO:CONSOLE:<line>] "<message>", source: <url> (<line>)`.
        let console = log.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map { line in
            line.range(of: "] ").map { String(line[$0.upperBound...]) } ?? String(line)
        }
        return Page(dom: child.output, console: console)
    }
}
