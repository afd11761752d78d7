public import Foundation
import TetherConcurrency

/// A child process for tests that need one — a restart, a crash, another writer: an executable built beside the test
/// bundle (a product of the package), its output collected in a file that the test reads while it runs.
///
/// ```swift
/// let child = try ProbeProcess(executable: "tether-persistence-probe", ["write-loop", path], in: directory)
/// try await eventually { child.lines.count >= 300 }
/// kill(child.process.processIdentifier, SIGKILL)
/// let outcome = await child.finish()  // killed by the test, not at the deadline: outcome.killedAtDeadline == nil
/// ```
public struct ProbeProcess: Sendable {
    /// The process (for its identifier, to signal it).
    public let process: Process
    /// Where its standard output and error go.
    public let outputPath: String
    /// Fired by the process's termination handler.
    private let exited = OneShot<Void>()

    /// The executable named `name` in the folder of the running test bundle.
    public static func executable(named name: String) -> URL {
        let me = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0])
        return me.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `executable`, built beside the test bundle, with `arguments`; its output goes to a file in `directory`.
    public init(
        executable: String, _ arguments: [String], in directory: TemporaryDirectory,
        environment: [String: String]? = nil
    ) throws {
        try self.init(
            executableURL: Self.executable(named: executable), arguments, in: directory, environment: environment)
    }

    /// Starts the executable at `executableURL` with `arguments`; its output goes to a file in `directory`.
    public init(
        executableURL: URL, _ arguments: [String], in directory: TemporaryDirectory,
        environment: [String: String]? = nil
    ) throws {
        process = Process()
        outputPath = directory.file("probe-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = executableURL
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = process.standardOutput
        let exited = exited
        process.terminationHandler = { _ in exited.fire() }
        try process.run()
    }

    /// The lines written so far.
    public var lines: [String] {
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// How a process ended: its status, its output, and whether it had to be killed at the deadline.
    public struct Outcome: Sendable, CustomStringConvertible {
        /// Its exit status, or the signal that ended it.
        public let status: Int32
        /// Its output, line by line.
        public let lines: [String]
        /// The deadline it was still running at, when it was killed there.
        public let killedAtDeadline: Duration?

        /// Status, deadline and output, for a failed expectation's message.
        public var description: String {
            let ending = killedAtDeadline.map { "killed, still running after \($0)" } ?? "exited with \(status)"
            return "\(ending); its output: \(lines)"
        }
    }

    /// Waits for the process to exit; past `deadline` (times ``DeadlineScale/factor``), kills it (SIGKILL), so that a
    /// hung child fails its test with the lines it got to instead of running into the test's time limit with nothing
    /// to show. A sanitizer's reports in its output are copied to this process's standard error, where CI's sanitizer
    /// stage looks for them.
    public func finish(within deadline: Duration = .seconds(60)) async -> Outcome {
        let identifier = process.processIdentifier
        let exited = exited
        let watchdog = Task {
            try? await Task.sleep(for: DeadlineScale.scaled(deadline))
            guard !Task.isCancelled, !exited.hasFired else { return false }
            kill(identifier, SIGKILL)
            return true
        }
        await exited.wait()
        watchdog.cancel()
        let killed = await watchdog.value
        let lines = lines
        SanitizerReports.forward(
            lines, child: "\(process.executableURL?.lastPathComponent ?? "probe") (pid \(identifier))")
        return Outcome(
            status: process.terminationStatus, lines: lines,
            killedAtDeadline: killed ? DeadlineScale.scaled(deadline) : nil)
    }

    /// Runs `executable` to the end, or to `deadline` (see ``finish(within:)``).
    public static func run(
        executable: String, _ arguments: [String], in directory: TemporaryDirectory,
        within deadline: Duration = .seconds(60)
    ) async throws -> Outcome {
        try await ProbeProcess(executable: executable, arguments, in: directory).finish(within: deadline)
    }
}

/// A fresh directory under the system's temporary directory, removed after use.
public struct TemporaryDirectory: Sendable {
    /// Its path.
    public let path: String

    /// The path of `name` in it.
    public func file(_ name: String) -> String {
        path + "/" + name
    }

    /// Makes a directory, runs `body` with it, removes it.
    public static func with<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
        let path = NSTemporaryDirectory() + "tether-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(TemporaryDirectory(path: path))
    }
}
