import Foundation
import TetherConcurrency

/// Runs `tether-persistence-probe`, built beside this test bundle.
struct ProbeProcess {
    let process = Process()
    let outputPath: String
    /// Fired by the process's termination handler.
    private let exited = OneShot<Void>()

    static var executable: URL {
        let me = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0])
        return me.deletingLastPathComponent().appendingPathComponent("tether-persistence-probe")
    }

    /// Starts the probe with `arguments`; its output goes to a file in `directory`.
    init(_ arguments: [String], in directory: TemporaryDirectory) throws {
        outputPath = directory.file("probe-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = Self.executable
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = process.standardOutput
        let exited = exited
        process.terminationHandler = { _ in exited.fire() }
        try process.run()
    }

    /// The lines written so far.
    var lines: [String] {
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// Waits for the process to exit; returns its status and output.
    func finish() async -> (status: Int32, lines: [String]) {
        await exited.wait()
        return (process.terminationStatus, lines)
    }

    /// Runs the probe to the end.
    static func run(_ arguments: [String], in directory: TemporaryDirectory) async throws -> (
        status: Int32, lines: [String]
    ) {
        try await ProbeProcess(arguments, in: directory).finish()
    }
}

/// Mounts a tmpfs (where the machine allows: root, and a kernel that lets this container mount), unmounted after.
enum ScratchMount {
    static func with<T>(
        at path: String, options: String, _ body: (Bool) async throws -> T
    ) async throws -> T {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mounted = run("/bin/mount", ["-t", "tmpfs", "-o", options, "tmpfs", path])
        defer { if mounted { _ = run("/bin/umount", [path]) } }
        return try await body(mounted)
    }

    static func run(_ tool: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
