import Foundation
import TetherConcurrency

/// A child process whose standard output and error go to files in a folder, so that nothing blocks on a full pipe;
/// its exit is awaited through its termination handler, not by polling.
struct ChildProcess {
    let process = Process()
    let outputPath: URL
    let errorPath: URL
    private let exited = OneShot<Void>()

    /// Starts `executable` with `arguments` in `directory`.
    init(_ executable: URL, _ arguments: [String], in directory: URL, environment: [String: String]? = nil) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if let environment { process.environment = environment }
        outputPath = directory.appendingPathComponent("stdout-\(UUID().uuidString).txt")
        errorPath = directory.appendingPathComponent("stderr-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: outputPath.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outputPath)
        process.standardError = try FileHandle(forWritingTo: errorPath)
        let exited = exited
        process.terminationHandler = { _ in exited.fire() }
        try process.run()
    }

    /// What it has written to standard output so far.
    var output: String { (try? String(contentsOf: outputPath, encoding: .utf8)) ?? "" }
    /// What it has written to standard error so far.
    var errors: String { (try? String(contentsOf: errorPath, encoding: .utf8)) ?? "" }

    /// Suspends until the process exits; past `deadline` (a correctness deadline, generous), terminates it first.
    /// Returns its exit status.
    func waitForExit(within deadline: Duration) async -> Int32 {
        let exited = exited
        let process = process
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await exited.wait() }
            group.addTask {
                let clock = ContinuousClock()
                if (try? await clock.sleep(until: clock.now + deadline)) != nil, process.isRunning {
                    process.terminate()
                }
            }
            await group.next()
            group.cancelAll()
        }
        await exited.wait()
        return process.terminationStatus
    }
}
