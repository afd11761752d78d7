public import Foundation
import TetherConcurrency

#if canImport(Glibc)
import Glibc
#endif

/// A child process whose standard output and error go to files in a folder, so that nothing blocks on a full pipe.
///
/// Started with `posix_spawn` and reaped by a thread of its own blocked in `waitpid` on its pid — not through
/// Foundation's `Process`, whose exit detection missed exits here when many children (a browser's, PostgreSQL's) came
/// and went, leaving a test waiting for ever.
public final class ChildProcess: Sendable {
    /// The child's process id.
    public let pid: pid_t
    /// Where its standard output goes.
    public let outputPath: URL
    /// Where its standard error goes.
    public let errorPath: URL
    private let executable: URL
    private let exited = OneShot<Int32>()

    /// Starts `executable` with `arguments` in `directory` (the environment: `environment`, else this process's).
    public init(_ executable: URL, _ arguments: [String], in directory: URL, environment: [String: String]? = nil)
        throws
    {
        self.executable = executable
        outputPath = directory.appendingPathComponent("stdout-\(UUID().uuidString).txt")
        errorPath = directory.appendingPathComponent("stderr-\(UUID().uuidString).txt")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // In `directory`: through coreutils' `env -C`, which changes to it and then executes the program in its place
        // (Glibc's Swift module does not export posix_spawn_file_actions_addchdir_np).
        let launcher = "/usr/bin/env"
        let argv = (["env", "-C", directory.path, executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = variables.map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, launcher, &actions, nil, argv, envp)
        guard status == 0 else {
            throw NSError(
                domain: NSPOSIXErrorDomain, code: Int(status),
                userInfo: [
                    NSLocalizedDescriptionKey: "cannot start \(executable.path): \(String(cString: strerror(status)))"
                ])
        }
        self.pid = pid
        let exited = exited
        let child = pid
        // Blocks in waitpid on a thread of its own (never one of Swift concurrency's) until the child exits.
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1, errno == EINTR {}
            // Exited: its code; killed by a signal: 128 + the signal, as a shell reports it.
            let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            exited.fire(code)
        }
    }

    /// What it has written to standard output so far.
    public var output: String { (try? String(contentsOf: outputPath, encoding: .utf8)) ?? "" }
    /// What it has written to standard error so far.
    public var errors: String { (try? String(contentsOf: errorPath, encoding: .utf8)) ?? "" }

    /// Whether it has not exited yet.
    public var isRunning: Bool { exited.value == nil }

    /// Sends it SIGINT (Ctrl-C).
    public func interrupt() { if isRunning { kill(pid, SIGINT) } }

    /// Sends it SIGTERM.
    public func terminate() { if isRunning { kill(pid, SIGTERM) } }

    /// Suspends until the process exits; past `deadline` (a correctness deadline, generous), terminates it first
    /// (and kills it 10 s later). Returns its exit status: its code, or 128 + the signal that ended it. Any
    /// sanitizer report in its output goes to this process's standard error, where CI's
    /// sanitizer stage finds it.
    public func waitForExit(within deadline: Duration) async -> Int32 {
        let exited = exited
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = await exited.wait() }
            group.addTask { [self] in
                let clock = ContinuousClock()
                guard (try? await clock.sleep(until: clock.now + deadline)) != nil else { return }
                terminate()
                guard (try? await clock.sleep(until: clock.now + .seconds(10))) != nil else { return }
                if isRunning { kill(pid, SIGKILL) }
            }
            await group.next()
            group.cancelAll()
        }
        let name = "\(executable.lastPathComponent) (pid \(pid))"
        SanitizerReports.forward((output + "\n" + errors).components(separatedBy: "\n"), child: name)
        return await exited.wait()
    }
}
