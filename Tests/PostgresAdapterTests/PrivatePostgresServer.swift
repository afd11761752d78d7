import Foundation
import TetherTesting

/// A PostgreSQL cluster of a test's own, for a test that stops and starts its server without disturbing the tests
/// that share the one `Scripts/with-postgres.sh` started for the run: the same script starts it detached
/// (`--detach`), and its control command stops, starts and finally destroys it.
///
/// Every command here is short, and its end is seen as the file its exit status is written to — not as the
/// process's exit, which Foundation's `Process` sometimes never reported here while other child processes came and
/// went. (`Process` closes this process's descriptors in the child, so the server a `start` leaves running holds
/// none of ours.)
struct PrivatePostgresServer: Sendable {
    /// The server's URL (`postgres://tether@127.0.0.1:PORT/postgres`).
    let url: String
    /// The script's control command: `stop`, `start` or `destroy` this cluster, as the user that owns it.
    let control: String
    private let directory: TemporaryDirectory

    /// The repository's `Scripts/with-postgres.sh`.
    static let scriptPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/with-postgres.sh").path

    /// Starts a cluster; returns once its server accepts connections.
    static func start(in directory: TemporaryDirectory) async throws -> PrivatePostgresServer {
        let environmentFile = directory.file("postgres.env")
        try await run(["bash", scriptPath, "--detach", environmentFile], in: directory)
        var values: [String: String] = [:]
        for line in try String(contentsOfFile: environmentFile, encoding: .utf8).split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard let url = values["TETHER_POSTGRES_URL"], let control = values["TETHER_POSTGRES_CTL"] else {
            throw CommandFailed(description: "Scripts/with-postgres.sh --detach wrote no server: \(values)")
        }
        return PrivatePostgresServer(url: url, control: control, directory: directory)
    }

    /// Stops the server (`pg_ctl stop -m fast`: sessions are ended, as in a restart for maintenance).
    func stopServer() async throws { try await Self.run(["bash", control, "stop"], in: directory) }

    /// Starts the server again, on the same port and directory; returns once it accepts connections.
    func startServer() async throws { try await Self.run(["bash", control, "start"], in: directory) }

    /// Stops the server and removes the cluster.
    func destroy() async throws { try await Self.run(["bash", control, "destroy"], in: directory) }

    struct CommandFailed: Error, CustomStringConvertible { let description: String }

    /// Runs `arguments` to its end: returns once it has written its exit status; throws unless it is 0.
    private static func run(_ arguments: [String], in directory: TemporaryDirectory) async throws {
        let statusFile = directory.file("command-\(UUID().uuidString).status")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments =
            ["-c", #""${@:2}"; echo $? > "$1.part" && mv "$1.part" "$1""#, "run", statusFile] + arguments
        try process.run()
        try await eventually(within: .seconds(60)) { FileManager.default.fileExists(atPath: statusFile) }
        let status = try String(contentsOfFile: statusFile, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard status == "0" else {
            throw CommandFailed(description: "\(arguments.joined(separator: " ")) exited \(status)")
        }
    }
}
