import Foundation
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits

/// The sample runner as a user runs it: a process, a configuration file, a report on disk.
@Suite("The sample runner", .needsProcessorTime)
struct SampleRunTests {
    /// Small sizes, real parts: the embedded server on loopback, AsyncHTTPClient, SQLite files in the folder.
    static let shortConfiguration = """
        services:
          demo:
            transport: { type: async-http-client }
            retry: { attempts: 3, initial_backoff: 10ms, jitter: 0 }
            cache: { key: relative }
            resources:
              - pattern: /stores/*/items
                stages: [{ type: json }, { type: inventory }]
        persistence: { type: sqlite, store_path: store.sqlite, cache_path: cache.sqlite }
        memory_pressure: { source: { type: manual } }
        delivery: { default: { type: next-signal }, resources: { type: deliver-on-queue } }
        live_queries:
          - { name: abc-items, collection: items, query: "store_id == $args.store", args: { store: abc123 } }
          - { name: cheap, collection: catalog, query: "store_id == 'abc123' && price < 10", sort: [price, name] }
        indexes:
          - { collection: catalog, fields: [store_id, price] }
        mirrors:
          - { name: abc, resource: /catalog/abc123, collection: catalog, id: id, scope: "store_id == 'abc123'" }
          - { name: def, resource: /catalog/def456, collection: catalog, id: id, scope: "store_id == 'def456'" }
        sample:
          mirrors: [abc, def]
          mirror_live_query: cheap
          mirror_rounds: 4
          mirror_burst: 3
          screens: 4
          details_per_screen: 1
          documents: 30
          arrivals: 60
          sample_interval: 10ms
          mutation_screens: 2
          mutations_per_screen: 4
          server: { slow_every: 5, slow_delay: 20ms, fail_every: 4 }
        """

    @Test(
        "A short configuration: exit 0, the summary, a report with one chart per policy; a second run restores the cache and revalidates"
    )
    func shortRun() async throws {
        try await SampleProcess.withDirectory { directory in
            try Self.shortConfiguration.write(
                to: directory.appendingPathComponent("short.yaml"), atomically: true, encoding: .utf8)
            let first = try await SampleProcess.run(
                ["--config", "short.yaml", "--report", "report.html"], in: directory)
            #expect(first.status == 0, "\(first.output)\n\(first.errors)")
            #expect(first.output.contains("Summary"))
            for policy in ["next-signal", "deliver-on-queue", "immediate", "naive"] {
                #expect(first.output.contains("\n" + policy), "the summary has a row for \(policy)")
            }
            #expect(first.output.contains("every check passed"))
            #expect(first.output.contains("first run, list fetched"))
            let report = try String(contentsOf: directory.appendingPathComponent("report.html"), encoding: .utf8)
            #expect(report.hasPrefix("<!DOCTYPE html>"))
            for policy in ["next-signal", "deliver-on-queue", "immediate"] {
                #expect(
                    report.components(separatedBy: "data-chart=\"results-\(policy)\"").count == 2,
                    "one chart for \(policy)")
            }
            #expect(report.components(separatedBy: "<svg").count == 6, "five charts, no other images")
            #expect(report.contains("data-chart=\"outbox\""), "the outbox over time")
            for promise in [
                "every screen showed its changes at once, with the API down",
                "restarted with the API still down, every screen showed its pending changes again",
                "the server applied changes whose answers never reached the process",
                "the outbox drained: nothing pending, nothing refused",
                "the server applied every change exactly once, in the order made on each screen (8 changes)",
                "every screen ended on the server's state",
            ] {
                #expect(first.output.contains("✔ " + promise), "\(promise): \(first.output)")
            }
            #expect(first.output.contains("✔ the naive pattern piled up"), "the contrast is checked: \(first.output)")
            for promise in [
                "after every refresh the collection held exactly the server's catalog and the screen the query over it",
                "a 304 wrote nothing: no commit, no result",
                "under next-signal a busy screen took only the latest of 3 changes",
                "with the API down the screen kept its items and the mirror's state said so",
            ] {
                #expect(first.output.contains("✔ " + promise), "\(promise): \(first.output)")
            }
            #expect(first.output.contains("the store holds no catalog yet (a first run)"))
            #expect(report.contains("<h2>Mirrors: remote data, queried locally</h2>"))
            #expect(report.components(separatedBy: "<td>round ").count - 1 == 4, "a row per round")
            #expect(!report.contains("http://") || !report.contains("src=\"http"), "no external assets")
            #expect(!report.contains("<script src") && !report.contains("<link"))

            let second = try await SampleProcess.run(
                ["--config", "short.yaml", "--report", "report.html", "--quiet"], in: directory)
            #expect(second.status == 0, "\(second.output)\n\(second.errors)")
            #expect(second.output.contains("Persistence: cached list after"))
            #expect(second.output.contains("then 304 Not Modified"))
            #expect(
                second.output.contains("items shown at start from the store, mirrored"),
                "the mirrored catalog shows from the store before any request: \(second.output)")
            #expect(!second.output.contains("opening screens"), "--quiet prints no progress")
        }
    }

    @Test(
        "A demonstration that shows nothing fails: with a consumer faster than the results, the naive pattern piles nothing up, and the sample exits 1"
    )
    func contrastMustShow() async throws {
        try await SampleProcess.withDirectory { directory in
            let fast = Self.shortConfiguration.replacingOccurrences(
                of: "arrivals: 60", with: "arrivals: 60\n  consumer_slowdown: 0.01")
            try fast.write(to: directory.appendingPathComponent("fast.yaml"), atomically: true, encoding: .utf8)
            let result = try await SampleProcess.run(
                ["--config", "fast.yaml", "--report", "report.html", "--quiet"], in: directory)
            #expect(result.status == 1, "\(result.output)\n\(result.errors)")
            #expect(result.output.contains("✘ the naive pattern piled up"), "\(result.output)")
            #expect(result.output.contains("check(s) FAILED"))
            let report = try String(contentsOf: directory.appendingPathComponent("report.html"), encoding: .utf8)
            #expect(report.contains("NOT held: the naive pattern did not pile up by a clear factor."))
            #expect(!report.contains("Every promise the sample checks held."))
        }
    }

    @Test("A broken configuration: a non-zero exit, the message with file and line, no stack trace, nothing started")
    func brokenConfiguration() async throws {
        try await SampleProcess.withDirectory { directory in
            let broken = Self.shortConfiguration
                .replacingOccurrences(of: "type: async-http-client", with: "type: curl")
                .replacingOccurrences(of: "  screens: 4", with: "  screens: -1")
                .replacingOccurrences(of: "mutation_screens: 2", with: "mutation_screens: 0")
            try broken.write(to: directory.appendingPathComponent("broken.yaml"), atomically: true, encoding: .utf8)
            let result = try await SampleProcess.run(["--config", "broken.yaml"], in: directory)
            #expect(result.status == 2)
            #expect(
                result.errors.contains(
                    "broken.yaml:3:24: services.demo.transport.type: unknown transport type 'curl'; known types: async-http-client, in-memory, urlsession"
                ), "\(result.errors)")
            #expect(result.errors.contains("broken.yaml:25:12: sample.screens: must be at least 2"), "\(result.errors)")
            #expect(
                result.errors.contains("broken.yaml:30:21: sample.mutation_screens: must be between 1 and 100"),
                "\(result.errors)")
            for trace in ["Stack trace", "Fatal error", "Current stack trace", "0x0000"] {
                #expect(!result.errors.contains(trace))
            }
            #expect(!result.output.contains("listening on"), "the server never started")
            #expect(
                !FileManager.default.fileExists(atPath: directory.appendingPathComponent("store.sqlite").path),
                "no database was created")
        }
    }

    @Test(
        "`type: postgres` in a build without the Postgres trait: exit 2, the located error, and how to get the plugin")
    func postgresWithoutTheTrait() async throws {
        try await SampleProcess.withDirectory { directory in
            let yaml = "persistence:\n  type: postgres\n  url: postgres://app@127.0.0.1/app\n"
            try yaml.write(to: directory.appendingPathComponent("pg.yaml"), atomically: true, encoding: .utf8)
            let result = try await SampleProcess.run(["--config", "pg.yaml"], in: directory)
            #expect(result.status == 2)
            #expect(
                result.errors.contains(
                    "pg.yaml:2:9: persistence.type: unknown persistence type 'postgres'; known types: memory, sqlite"),
                "\(result.errors)")
            #expect(
                result.errors.contains(
                    "note: this build of the sample has no PostgreSQL plugin; run it as `swift run --traits Postgres tether-sample --config pg.yaml`"
                ), "\(result.errors)")
        }
    }

    @Test(
        "An alias bomb in the configuration: refused in bounded time with the file and line, exit 2 (it once grew past 3 GB)"
    )
    func aliasBomb() async throws {
        try await SampleProcess.withDirectory { directory in
            var lines = ["live_queries:", "  - collection: items", "    query: \"a == $args.x\"", "    args:"]
            lines.append("      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]")
            for level in 1...9 {
                lines.append(
                    "      l\(level): &l\(level) ["
                        + Array(repeating: "*l\(level - 1)", count: 10).joined(separator: ", ") + "]")
            }
            lines.append("      x: *l9")
            try (lines.joined(separator: "\n") + "\n").write(
                to: directory.appendingPathComponent("bomb.yaml"), atomically: true, encoding: .utf8)
            let result = try await SampleProcess.run(["--config", "bomb.yaml"], in: directory)
            #expect(result.status == 2, "\(result.output)\n\(result.errors)")
            #expect(result.errors.contains("bomb.yaml:"), "\(result.errors)")
            #expect(result.errors.contains("the document expands to more than 100000 nodes"), "\(result.errors)")
        }
    }

    @Test("SIGINT while the configuration loads (a file that never finishes arriving): exit 130 at once")
    func interruptedWhileLoading() async throws {
        try await SampleProcess.withDirectory { directory in
            let fifo = directory.appendingPathComponent("slow.yaml").path
            #expect(mkfifo(fifo, 0o600) == 0)
            // Opening the pipe for writing returns once the sample has opened it for reading: it is then loading,
            // with its signals trapped (they are trapped before anything else). The writer stays open, so the load
            // never ends by itself. On a thread of its own: open blocks.
            let writer = PipeWriter()
            Thread.detachNewThread { writer.open(fifo, writing: "services: {}\n") }
            let result = try await SampleProcess.run(["--config", "slow.yaml"], in: directory) { _ in writer.isOpen }
            writer.close(fifo)
            #expect(result.status == 130, "\(result.output)\n\(result.errors)")
            #expect(result.errors.contains("interrupted (SIGINT) while loading the configuration"), "\(result.errors)")
            for trace in ["Stack trace", "Fatal error"] { #expect(!result.errors.contains(trace)) }
        }
    }

    @Test("SIGINT during the scenarios: they stop, the pipeline shuts down, exit 130, and the next run opens the store")
    func interrupted() async throws {
        try await SampleProcess.withDirectory { directory in
            let long = Self.shortConfiguration.replacingOccurrences(of: "arrivals: 60", with: "arrivals: 10000000")
            try long.write(to: directory.appendingPathComponent("long.yaml"), atomically: true, encoding: .utf8)
            let clock = ContinuousClock()
            var signalled = clock.now
            let result = try await SampleProcess.run(["--config", "long.yaml"], in: directory) { output in
                signalled = clock.now
                return output.contains("4. Back pressure")
            }
            #expect(result.status == 130, "\(result.output)\n\(result.errors)")
            #expect(result.output.contains("interrupted: stopping the scenarios"))
            #expect(clock.now - signalled < .seconds(30), "it stopped promptly")
            for trace in ["Stack trace", "Fatal error"] { #expect(!result.errors.contains(trace)) }
            // The store was closed cleanly: the next run opens it (integrity checked on open) and finds the documents.
            let rerun = try await SampleProcess.run(
                ["--config", "long.yaml", "--report", "report.html"], in: directory,
                interruptWhen: { $0.contains("3. Ownership") })
            #expect(rerun.status == 130)
            // Whether the first run committed any document before its signal depends on timing (the back-pressure
            // writes begin after the section title): what must hold is that the store opened, with no error.
            #expect(rerun.output.contains("persistence: SQLite: store"), "\(rerun.output)")
            #expect(!rerun.errors.split(separator: "\n").contains { $0.hasPrefix("error:") }, "\(rerun.errors)")
        }
    }

    @Test("SIGINT as soon as the demo API listens, before the service group runs: a clean stop, exit 130, not a kill")
    func interruptedAtStart() async throws {
        try await SampleProcess.withDirectory { directory in
            // A run long enough that the signal cannot come after its end, however late this test's polling is.
            let long = Self.shortConfiguration.replacingOccurrences(of: "arrivals: 60", with: "arrivals: 10000000")
            try long.write(to: directory.appendingPathComponent("long.yaml"), atomically: true, encoding: .utf8)
            let result = try await SampleProcess.run(["--config", "long.yaml"], in: directory) { output in
                output.contains("listening on")
            }
            #expect(result.status == 130, "\(result.output)\n\(result.errors)")
            for trace in ["Stack trace", "Fatal error"] { #expect(!result.errors.contains(trace)) }
        }
    }

    @Test(
        "SIGTERM as soon as the demo API listens: a clean stop, exit 143 (128 + the signal's number, as a shell says)")
    func terminatedAtStart() async throws {
        try await SampleProcess.withDirectory { directory in
            let long = Self.shortConfiguration.replacingOccurrences(of: "arrivals: 60", with: "arrivals: 10000000")
            try long.write(to: directory.appendingPathComponent("long.yaml"), atomically: true, encoding: .utf8)
            let result = try await SampleProcess.run(["--config", "long.yaml"], in: directory, terminating: true) {
                $0.contains("listening on")
            }
            #expect(result.status == 143, "\(result.output)\n\(result.errors)")
            for trace in ["Stack trace", "Fatal error"] { #expect(!result.errors.contains(trace)) }
        }
    }

    @Test("On one CPU, SIGTERM while the largest configuration decodes: exit 143 at once, not once the load is done")
    func terminatedWhileDecodingOnOneCPU() async throws {
        try await SampleProcess.withDirectory { directory in
            // 180 live queries of 256 arguments each, the most the limits allow: decoding them keeps a thread busy
            // for seconds. Through a pipe, so that the signal comes once the sample has opened the file — its signals
            // trapped, since that comes first — and has read all of it: it is decoding then.
            let argument = (0..<256).map { "      k\($0): \($0)" }.joined(separator: "\n")
            let queries = (0..<180).map {
                "  - name: wide\($0)\n    collection: items\n    query: \"a == $args.k0\"\n    args:\n" + argument
            }
            let wide = Self.shortConfiguration.replacingOccurrences(
                of: "live_queries:\n", with: "live_queries:\n" + queries.joined(separator: "\n") + "\n")
            let fifo = directory.appendingPathComponent("wide.yaml").path
            #expect(mkfifo(fifo, 0o600) == 0)
            let fed = LockedValue(false)
            Thread.detachNewThread {
                // Opening blocks until the sample opens the pipe to read it.
                guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
                handle.write(Data(wide.utf8))
                try? handle.close()
                fed.withLock { $0 = true }
            }
            let result = try await SampleProcess.run(
                ["--config", "wide.yaml"], in: directory, oneCPU: true, terminating: true
            ) { _ in fed.withLock { $0 } }
            #expect(result.status == 143, "\(result.output)\n\(result.errors)")
            #expect(
                result.errors.contains("interrupted (SIGTERM) while loading the configuration"), "\(result.errors)")
            #expect(!result.output.contains("Tether sample — configuration"), "it stopped before the load ended")
        }
    }

    @Test("With --exit-with-parent, the sample stops when the process that started it is killed")
    func exitsWithParent() async throws {
        try await SampleProcess.withDirectory { directory in
            let long = Self.shortConfiguration.replacingOccurrences(of: "arrivals: 60", with: "arrivals: 10000000")
            try long.write(to: directory.appendingPathComponent("long.yaml"), atomically: true, encoding: .utf8)
            // A shell starts the sample in the background, prints its process id and waits; killing the shell
            // (SIGKILL: no chance to pass anything on) orphans the sample, as a crashed test runner would.
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            shell.arguments = [
                "-c", "\"$0\" --config long.yaml --exit-with-parent >out.txt 2>err.txt & echo $! >pid.txt; wait",
                SampleProcess.executable.path,
            ]
            shell.currentDirectoryURL = directory
            try shell.run()
            let file = { @Sendable (name: String) in
                (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
            }
            try await eventually(within: .seconds(300)) { file("out.txt").contains("4. Back pressure") }
            let pid = try #require(Int32(file("pid.txt").trimmingCharacters(in: .whitespacesAndNewlines)))
            kill(shell.processIdentifier, SIGKILL)
            // Not waitUntilExit(): it blocks one of Swift concurrency's threads while it polls.
            try await eventually(within: .seconds(60)) { !shell.isRunning }
            try await eventually(within: .seconds(60)) { !Self.isRunning(pid) }
            #expect(file("err.txt").contains("stopping: the parent process"), "\(file("err.txt"))")
        }
    }

    /// Whether `pid` is a live process (a zombie waiting for a reaper counts as gone).
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        guard let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].dropFirst(2).hasPrefix("Z")
    }

    @Test("A missing configuration file is named; --help explains the flags")
    func missingFileAndHelp() async throws {
        try await SampleProcess.withDirectory { directory in
            let missing = try await SampleProcess.run(["--config", "nope.yaml"], in: directory)
            #expect(missing.status == 2)
            #expect(missing.errors.contains("nope.yaml: no configuration file at"))
            let help = try await SampleProcess.run(["--help"], in: directory)
            #expect(help.status == 0)
            for flag in ["--config", "--report", "--quiet"] { #expect(help.output.contains(flag)) }
        }
    }
}

/// The writing end of a named pipe, opened on a thread of its own.
final class PipeWriter: @unchecked Sendable {
    private let condition = NSCondition()
    private var descriptor: Int32?

    var isOpen: Bool {
        condition.lock()
        defer { condition.unlock() }
        return descriptor != nil
    }

    /// Blocks until a reader opens `path`, then writes `text` and keeps the pipe open.
    func open(_ path: String, writing text: String) {
        let opened = Foundation.open(path, O_WRONLY)
        _ = text.withCString { write(opened, $0, strlen($0)) }
        condition.lock()
        descriptor = opened
        condition.broadcast()
        condition.unlock()
    }

    /// Closes the pipe; if no reader ever came, opens one (kept open until the writer has written, so that it gets
    /// no SIGPIPE) so that the blocked writer's thread ends.
    func close(_ path: String) {
        let reader = isOpen ? -1 : Foundation.open(path, O_RDONLY | O_NONBLOCK)
        condition.lock()
        while descriptor == nil { condition.wait() }
        Foundation.close(descriptor!)
        condition.unlock()
        if reader >= 0 { Foundation.close(reader) }
    }
}
