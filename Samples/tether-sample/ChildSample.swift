import Foundation

/// Another `tether-sample` process, started by the mutations scenario: the same executable and configuration, in the
/// same folder. Its standard output and error go to files the scenario reads as they grow; the child writes each
/// line with one `write`, so a line written before a `SIGKILL` is kept.
final class ChildSample {
    private let process = Process()
    private let outputURL: URL
    private let errorsURL: URL
    let name: String

    /// Starts `tether-sample` with `arguments`; it stops by itself if this process ends first.
    init(_ name: String, arguments: [String], folder: URL) throws {
        self.name = name
        outputURL = folder.appendingPathComponent("\(name).out")
        errorsURL = folder.appendingPathComponent("\(name).err")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorsURL.path, contents: nil)
        process.executableURL = Self.executable
        process.arguments = arguments + ["--exit-with-parent"]
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorsURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// This process's own executable.
    private static var executable: URL {
        #if os(Linux)
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
        Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        #endif
    }

    /// The complete lines written so far, each split at its tabs.
    var lines: [[String]] {
        let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: true).dropLast(text.hasSuffix("\n") ? 0 : 1)
            .map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    /// What it wrote to standard error.
    var errors: String {
        (try? String(contentsOf: errorsURL, encoding: .utf8)) ?? ""
    }

    var isRunning: Bool { process.isRunning }

    var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }

    /// Waits until a line begins with `tag`, the process ends, or `timeout` passes; true when the line came.
    func waitForLine(_ tag: String, timeout: Duration) async throws -> Bool {
        try await waitUntil(timeout: timeout) { lines.contains { $0.first == tag } || !isRunning }
        return lines.contains { $0.first == tag }
    }

    /// Waits until the process ends or `timeout` passes; true when it ended.
    func waitForExit(timeout: Duration) async throws -> Bool {
        try await waitUntil(timeout: timeout) { !isRunning }
        return !isRunning
    }

    /// Copies to this process's standard error the standard error of every child in `folder` that holds a
    /// sanitizer's report, before the folder goes: in a build under a sanitizer, a race in a child then shows where
    /// a race in this process would (CI's sanitizer stage fails on it).
    static func copySanitizerReports(in folder: URL) {
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        for file in files where file.pathExtension == "err" {
            guard let text = try? String(contentsOf: file, encoding: .utf8), text.contains("Sanitizer") else {
                continue
            }
            FileHandle.standardError.write(Data("\(file.lastPathComponent):\n\(text)\n".utf8))
        }
    }

    /// Ends it at once, as a crash or an out-of-memory kill would: no handler runs, nothing is flushed or closed.
    func kill() {
        if process.isRunning { _ = Foundation.kill(process.processIdentifier, SIGKILL) }
    }

}
