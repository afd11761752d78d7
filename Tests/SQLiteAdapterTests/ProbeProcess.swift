import Foundation
import TetherTesting

extension ProbeProcess {
    /// Starts `tether-persistence-probe`, built beside this test bundle.
    init(_ arguments: [String], in directory: TemporaryDirectory) throws {
        try self.init(executable: "tether-persistence-probe", arguments, in: directory)
    }

    /// Runs `tether-persistence-probe` to the end.
    static func run(_ arguments: [String], in directory: TemporaryDirectory) async throws -> Outcome {
        try await run(executable: "tether-persistence-probe", arguments, in: directory)
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
