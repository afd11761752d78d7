import Foundation
import TetherClock
import TetherConcurrency
import TransportKit

/// Samples this process's resident memory (`/proc/self/statm`) and, given a ``ResultTally``, the consumer's results
/// alive, on a thread of its own, so that the samples go on whatever the scenario's threads are doing.
final class MemorySampler: Sendable {
    struct Sample: Sendable {
        /// Milliseconds since sampling started.
        var milliseconds: Double
        /// Resident memory, in MiB.
        var megabytes: Double
        /// The consumer's results alive (0 without a tally).
        var results = 0
        /// Their size, in MiB.
        var resultMegabytes = 0.0
    }

    private let samples = LockedValue<[Sample]>([])
    private let running = LockedValue(true)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts sampling every `interval`.
    init(interval: Duration, tally: ResultTally? = nil) {
        let start = ContinuousClock.now
        let samples = samples
        let running = running
        let finished = finished
        let pause = max(interval.timeInterval, 0.001)
        Thread.detachNewThread {
            while running.withLock({ $0 }) {
                let elapsed = (ContinuousClock.now - start).timeInterval * 1000
                let results = tally?.now ?? ResultTally.Counts()
                let sample = Sample(
                    milliseconds: elapsed, megabytes: Double(Self.residentBytes()) / 1_048_576, results: results.alive,
                    resultMegabytes: Double(results.bytes) / 1_048_576)
                samples.withLock { $0.append(sample) }
                Thread.sleep(forTimeInterval: pause)
            }
            finished.signal()
        }
    }

    /// Stops sampling (once; later calls just return the samples); returns the samples.
    @discardableResult
    func stop() -> [Sample] {
        let wasRunning = running.withLock { running -> Bool in
            defer { running = false }
            return running
        }
        if wasRunning { finished.wait() }
        return samples.withLock { $0 }
    }

    /// The resident set now, in bytes (0 where `/proc` is missing).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

extension Duration {
    /// In milliseconds, as a `Double`.
    var milliseconds: Double { timeInterval * 1000 }
}
