import Foundation
import TetherTesting

/// Debian's `chromium`, headless, as the browser tests drive it: the page's DOM once its scripts have run, and the
/// console messages it logged (errors included). Found on `PATH` (`chromium`, `chromium-browser`) or at
/// `$TETHER_CHROMIUM`; `.ci/run` installs it when missing.
struct HeadlessChromium: Sendable {
    let executable: URL

    /// The browser, if this machine has one.
    static let found: HeadlessChromium? = {
        var candidates: [String] = []
        if let path = ProcessInfo.processInfo.environment["TETHER_CHROMIUM"] { candidates.append(path) }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            candidates += ["chromium", "chromium-browser"].map { "\(directory)/\($0)" }
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
            .map { HeadlessChromium(executable: URL(fileURLWithPath: $0)) }
    }()

    /// Loads `url`, lets its scripts run for `budget` of virtual time (fetches included), and returns the DOM then
    /// and the console's lines. With `screenshot`, also saves a PNG of the page there.
    func load(
        _ url: String, budget: Duration = .seconds(3), screenshot: String? = nil
    ) async throws -> (dom: String, console: [String]) {
        try await TemporaryDirectory.with { directory in
            var arguments = [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                "--user-data-dir=\(directory.file("profile"))", "--enable-logging=stderr", "--v=0",
                "--virtual-time-budget=\(budget.components.seconds * 1000)", "--window-size=1400,1000",
            ]
            if let screenshot { arguments.append("--screenshot=\(screenshot)") } else { arguments.append("--dump-dom") }
            arguments.append(url)
            let (status, lines) = try await ProbeProcess(executableURL: executable, arguments, in: directory).finish()
            guard status == 0 else {
                throw BrowserFailure(message: "chromium exited \(status): \(lines.suffix(20).joined(separator: "\n"))")
            }
            // stdout (the DOM) and stderr (the log) share the file: the log's lines start with "[pid:tid:".
            let console = lines.filter { $0.contains(":CONSOLE") }
            let dom = lines.filter { !$0.hasPrefix("[") }.joined(separator: "\n")
            return (dom, console)
        }
    }
}

struct BrowserFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
