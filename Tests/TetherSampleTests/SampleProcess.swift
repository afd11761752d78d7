import Foundation
import TetherTesting

/// Runs the `tether-sample` executable built beside this test bundle, in a folder of its own.
struct SampleProcess {
    struct Result {
        var status: Int32
        var output: String
        var errors: String
    }

    static var executable: URL {
        let me = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0])
        return me.deletingLastPathComponent().appendingPathComponent("tether-sample")
    }

    /// Runs the sample with `arguments` in `directory`; returns its status, standard output and standard error.
    /// With `interruptWhen`, sends SIGINT (SIGTERM when `terminating`) as soon as the output satisfies it (it may act
    /// first: load a page, say). With `oneCPU`, the sample runs on CPU 0 alone (`taskset`, which executes it in its
    /// place: the signals reach the sample).
    static func run(
        _ arguments: [String], in directory: URL, environment: [String: String] = [:], oneCPU: Bool = false,
        terminating: Bool = false, interruptWhen: ((String) async -> Bool)? = nil
    ) async throws -> Result {
        // A test runner that dies leaves no sample running: it stops when its parent is gone.
        let (program, prefix) =
            oneCPU ? (URL(fileURLWithPath: "/usr/bin/taskset"), ["-c", "0", executable.path]) : (executable, [])
        let child = try ChildProcess(
            program, prefix + arguments + ["--exit-with-parent"], in: directory,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        if let interruptWhen {
            // The output is a file the sample appends to: look at it until the awaited line appears, or the exit.
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(600)
            while child.isRunning, !(await interruptWhen(child.output)), clock.now < deadline {
                try await clock.sleep(until: clock.now + .milliseconds(20))
            }
            if terminating { child.terminate() } else { child.interrupt() }
        }
        let status = await child.waitForExit(within: .seconds(600))
        return Result(status: status, output: child.output, errors: child.errors)
    }

    /// A fresh folder, removed after `body`.
    static func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "tether-sample-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try await body(url)
    }
}
