import Foundation

/// Runs the `tether-sample` executable built beside this test bundle, in a folder of its own.
struct SampleProcess {
    struct Result {
        var status: Int32
        var output: String
        var errors: String
    }

    static var executable: URL {
        let me = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        return me.deletingLastPathComponent().appendingPathComponent("tether-sample")
    }

    /// Runs the sample with `arguments` in `directory`; returns its status, standard output and standard error.
    /// With `interruptWhen`, sends SIGINT as soon as the output satisfies it.
    static func run(
        _ arguments: [String], in directory: URL, environment: [String: String] = [:],
        interruptWhen: ((String) -> Bool)? = nil
    ) async throws -> Result {
        let process = Process()
        process.executableURL = executable
        // A test runner that dies leaves no sample running: it stops when its parent is gone.
        process.arguments = arguments + ["--exit-with-parent"]
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let outputPath = directory.appendingPathComponent("stdout-\(UUID().uuidString).txt")
        let errorPath = directory.appendingPathComponent("stderr-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: outputPath.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outputPath)
        process.standardError = try FileHandle(forWritingTo: errorPath)
        try process.run()
        let deadline = ContinuousClock.now + .seconds(600)
        var interrupted = false
        while process.isRunning, ContinuousClock.now < deadline {
            if let interruptWhen, !interrupted, interruptWhen((try? String(contentsOf: outputPath, encoding: .utf8)) ?? "") {
                process.interrupt()
                interrupted = true
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            output: (try? String(contentsOf: outputPath, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOf: errorPath, encoding: .utf8)) ?? "")
    }

    /// A fresh folder, removed after `body`.
    static func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("tether-sample-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try await body(url)
    }
}
