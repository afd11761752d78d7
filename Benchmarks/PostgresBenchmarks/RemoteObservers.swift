import BenchmarkSupport
import Foundation
import TetherConcurrency

/// `tether-postgres-bench-observer` running beside this benchmark: observers in another process, on a store of
/// their own, sharing only the server with the writer here. Its handlers' times come back on its standard output
/// (the monotonic clock is the machine's, so they compare with this process's).
final class RemoteObservers: Sendable {
    let process: Process
    private let input: Pipe
    let arrivals: Arrivals
    private let isReady = LockedValue(false)
    private let reports = LockedValue<[[Int]]>([])
    private let exited = OneShot<Void>()

    /// Starts `observers` observers over `groups` groups of `schema`; returns once every one has its first result.
    init(url: String, schema: String, observers: Int, groups: Int, arrivals: Arrivals) async throws {
        self.arrivals = arrivals
        process = Process()
        let me = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.executableURL = me.deletingLastPathComponent().appendingPathComponent("tether-postgres-bench-observer")
        process.arguments = [url, schema, "\(observers)", "\(groups)"]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        let exited = exited
        process.terminationHandler = { _ in _ = exited.fire() }
        try process.run()
        // Its output, line by line, on a thread of its own (blocking reads).
        let (isReady, reports) = (isReady, reports)
        Thread {
            var pending = Data()
            let handle = output.fileHandleForReading
            while case let chunk = handle.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    let words = line.split(separator: " ")
                    switch words.first {
                    case "seen":
                        if words.count == 3, let seq = Int(words[1]), let at = Int(words[2]) {
                            arrivals.saw(seq, at: at)
                        }
                    case "ready": isReady.withLock { $0 = true }
                    case "report": reports.withLock { $0.append(words.dropFirst().compactMap { Int($0) }) }
                    default: print("observer: \(line)")
                    }
                }
            }
        }.start()
        guard try await waitUntil(timeout: .seconds(120), { isReady.withLock { $0 } || !process.isRunning }),
            process.isRunning
        else {
            throw ObserverFailure(
                description: "the observers were not ready within 120 s (running: \(process.isRunning))")
        }
    }

    /// Ends the other process if it still runs (a scenario that failed): it must not outlive the benchmark.
    deinit {
        if process.isRunning { process.terminate() }
    }

    struct ObserverFailure: Error, CustomStringConvertible { let description: String }

    /// The other process's counts once its live queries have caught up with `commit`: statements, reads, change-log
    /// reads, evaluations, incremental updates, deliveries.
    func report(through commit: UInt64) async throws -> [Int] {
        let before = reports.withLock { $0.count }
        input.fileHandleForWriting.write(Data("report \(commit)\n".utf8))
        guard try await waitUntil(timeout: .seconds(120), { reports.withLock { $0.count } > before }) else {
            throw ObserverFailure(description: "no report through commit \(commit) within 120 s")
        }
        return reports.withLock { $0.last! }
    }

    /// Ends the other process and waits for it.
    func close() async {
        try? input.fileHandleForWriting.close()
        await exited.wait()
    }
}
