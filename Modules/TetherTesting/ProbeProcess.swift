public import Foundation
import TetherConcurrency

/// A child process for tests that need one — a restart, a crash, another writer: an executable built beside the test
/// bundle (a product of the package), its output collected in a file that the test reads while it runs.
///
/// ```swift
/// let child = try ProbeProcess(executable: "tether-persistence-probe", ["write-loop", path], in: directory)
/// try await eventually { child.lines.count >= 300 }
/// kill(child.process.processIdentifier, SIGKILL)
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

    /// Starts `executable` with `arguments`; its output goes to a file in `directory`.
    public init(
        executable: String, _ arguments: [String], in directory: TemporaryDirectory,
        environment: [String: String]? = nil
    ) throws {
        process = Process()
        outputPath = directory.file("probe-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = Self.executable(named: executable)
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

    /// Waits for the process to exit; returns its status and output.
    public func finish() async -> (status: Int32, lines: [String]) {
        await exited.wait()
        return (process.terminationStatus, lines)
    }

    /// Runs `executable` to the end.
    public static func run(
        executable: String, _ arguments: [String], in directory: TemporaryDirectory
    ) async throws -> (status: Int32, lines: [String]) {
        try await ProbeProcess(executable: executable, arguments, in: directory).finish()
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
