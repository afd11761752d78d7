import Foundation

/// A page as headless Chromium renders it: its DOM after loading, and every console message the page produced.
struct HeadlessBrowser {
    struct Page {
        /// The serialized DOM after load.
        var dom: String
        /// Console messages ("message", source: …), in order.
        var console: [String]
    }

    let executable: URL

    /// Chromium, from `TETHER_BROWSER` or the first of Debian's and Google's names on the `PATH`.
    static let found: HeadlessBrowser? = {
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
    static var required: Bool { ProcessInfo.processInfo.environment["TETHER_REQUIRE_BROWSER"] == "1" }

    /// Loads `file` and returns its DOM and console messages.
    func load(_ file: URL, in directory: URL) async throws -> Page {
        let child = try ChildProcess(
            executable,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--user-data-dir=\(directory.path)/chromium-profile", "--enable-logging=stderr", "--v=0", "--dump-dom",
                file.absoluteString,
            ], in: directory)
        _ = await child.waitForExit(within: .seconds(120))
        let log = child.errors
        // Chromium logs each console message as `[…:INFO:CONSOLE:<line>] "<message>", source: <url> (<line>)`.
        let console = log.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map { line in
            line.range(of: "] ").map { String(line[$0.upperBound...]) } ?? String(line)
        }
        return Page(dom: child.output, console: console)
    }
}
