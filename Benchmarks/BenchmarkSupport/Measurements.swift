public import Benchmark
import Foundation
import TetherConcurrency

/// A count shared between threads.
public final class Counter: Sendable {
    private let value = LockedValue(0)
    public init() {}
    public func increment() { value.withLock { $0 += 1 } }
    public var count: Int { value.withLock { $0 } }
}

/// Microseconds on the monotonic clock.
public func nowMicroseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return time.tv_sec * 1_000_000 + time.tv_nsec / 1_000
}

/// The `p`th percentile (0…100) of `values`, by nearest rank; 0 when empty.
public func percentile(_ p: Double, _ values: [Int]) -> Int {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

/// Each scenario runs several times, the sides alternating; every run's figure — or, for a figure a run measures
/// more than once, every measurement's — is one sample of its metric, so package-benchmark's table shows the median
/// (p50) and the spread (p0…p100) over the samples. The same summary is printed as one line per figure: "median
/// (min–max) | samples N".
public final class Runs: Sendable {
    public let scenario: String
    private let samples = LockedValue<[(name: String, values: [Int])]>([])

    public init(_ scenario: String) { self.scenario = scenario }

    public func record(_ benchmark: Benchmark, _ metric: BenchmarkMetric, _ value: Int) {
        benchmark.measurement(metric, value)
        let name = metric.description
        samples.withLock { samples in
            if let index = samples.firstIndex(where: { $0.name == name }) {
                samples[index].values.append(value)
            } else {
                samples.append((name, [value]))
            }
        }
    }

    public func printSummary() {
        for (name, values) in samples.withLock({ $0 }) {
            let sorted = values.sorted()
            print(
                "SUMMARY | \(scenario) | \(name) | \(percentile(50, sorted)) (\(sorted.first!)–\(sorted.last!)) "
                    + "| samples \(sorted.count)")
        }
    }
}

/// Resident memory, sampled every 5 ms on a thread of its own; keeps the peak.
public final class ResidentSampler: Sendable {
    let peak = LockedValue(0)
    let running = LockedValue(true)

    public init() {
        let thread = Thread { [self] in
            while running.withLock({ $0 }) {
                let now = Self.resident()
                peak.withLock { $0 = max($0, now) }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        thread.start()
    }

    public func stop() -> Int {
        running.withLock { $0 = false }
        return peak.withLock { $0 }
    }

    public static func resident() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }
}

/// Waits until `condition` holds, polling every millisecond, or `timeout` passes; returns whether it held.
@discardableResult
public func waitUntil(timeout: Duration = .seconds(30), _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// Runs the two sides of one run of a scenario: `first` first in even runs, `second` first in odd ones, so that
/// neither always has the warmer (or the more fragmented) machine.
public func alternating(
    _ run: Int, _ first: () async throws -> Void, _ second: () async throws -> Void
) async throws {
    if run % 2 == 0 {
        try await first()
        try await second()
    } else {
        try await second()
        try await first()
    }
}

/// Runs the sides of one run of a scenario, each run starting one further along the list: every side goes first,
/// in the middle and last equally often.
public func rotating(_ run: Int, _ sides: [() async throws -> Void]) async throws {
    for index in sides.indices { try await sides[(run + index) % sides.count]() }
}

/// One benchmark per scenario, run once (each scenario repeats its own runs inside and records each as a sample).
public func scenario(_ metrics: [BenchmarkMetric]) -> Benchmark.Configuration {
    .init(metrics: metrics, warmupIterations: 0, maxDuration: .seconds(900), maxIterations: 1)
}

/// The process's CPU time (user and system, every thread) and voluntary context switches so far (`getrusage`): what
/// a stretch of work cost beyond its wall-clock time, and how often its threads went to sleep and were woken.
public struct ProcessUsage: Sendable {
    public var cpuMicroseconds: Int
    public var voluntarySwitches: Int

    public static func now() -> ProcessUsage {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        let user = Int(usage.ru_utime.tv_sec) * 1_000_000 + Int(usage.ru_utime.tv_usec)
        let system = Int(usage.ru_stime.tv_sec) * 1_000_000 + Int(usage.ru_stime.tv_usec)
        return ProcessUsage(cpuMicroseconds: user + system, voluntarySwitches: Int(usage.ru_nvcsw))
    }

    /// What was used between `earlier` and this.
    public static func - (later: ProcessUsage, earlier: ProcessUsage) -> ProcessUsage {
        ProcessUsage(
            cpuMicroseconds: later.cpuMicroseconds - earlier.cpuMicroseconds,
            voluntarySwitches: later.voluntarySwitches - earlier.voluntarySwitches)
    }

    public static func += (total: inout ProcessUsage, stretch: ProcessUsage) {
        total.cpuMicroseconds += stretch.cpuMicroseconds
        total.voluntarySwitches += stretch.voluntarySwitches
    }

    public static let zero = ProcessUsage(cpuMicroseconds: 0, voluntarySwitches: 0)
}
