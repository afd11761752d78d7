#if canImport(Glibc)
import Foundation
import Glibc
public import Logging
public import TetherClock

/// Memory pressure as a threshold on memory in use: this process's resident set, or its cgroup's usage against the
/// cgroup's limit (cgroup v2 `memory.current`/`memory.max`, or v1 `memory.usage_in_bytes`/`memory.limit_in_bytes`).
///
/// It checks every `interval` and reports pressure for each check over the limit. Where the files cannot be read,
/// or the cgroup has no limit, it logs why once and reports nothing.
public struct ResidentMemoryPressureSource: MemoryPressureSource {
    /// What counts as too much.
    public enum Limit: Sendable, Equatable {
        /// This process's resident set above this many bytes (`/proc/self/statm`).
        case residentBytes(Int)
        /// The cgroup's usage above this fraction of its limit (0 < fraction ≤ 1).
        case cgroupFraction(Double)
    }

    /// The limit, how often to check, and where the files are.
    public struct Configuration: Sendable {
        /// What counts as too much.
        public var limit: Limit
        /// How often to check.
        public var interval: Duration
        /// Where `/proc` is (tests point it elsewhere).
        public var procRoot: String
        /// Where the cgroup hierarchies are mounted.
        public var cgroupRoot: String

        /// Makes a configuration; checks every second by default.
        public init(
            limit: Limit, interval: Duration = .seconds(1), procRoot: String = "/proc",
            cgroupRoot: String = "/sys/fs/cgroup"
        ) {
            self.limit = limit
            self.interval = interval
            self.procRoot = procRoot
            self.cgroupRoot = cgroupRoot
        }
    }

    /// One reading: memory in use, the limit it is held to, and where they came from.
    public struct Reading: Sendable, Equatable {
        /// Bytes in use.
        public var used: Int
        /// The limit in bytes.
        public var limit: Int
        /// The files read.
        public var source: String

        /// Makes a reading.
        public init(used: Int, limit: Int, source: String) {
            self.used = used
            self.limit = limit
            self.source = source
        }
    }

    /// "resident-limit".
    public let name = "resident-limit"
    /// The configuration in use.
    public let configuration: Configuration
    private let logger: Logger
    private let timeSource: any TimeSource

    /// Makes the source; it waits between checks on `timeSource` (a `ManualTimeSource` makes every check a step a
    /// test takes).
    public init(
        configuration: Configuration, logger: Logger = Logger(label: "tether.memory-pressure"),
        timeSource: any TimeSource = .system
    ) {
        self.configuration = configuration
        self.logger = logger
        self.timeSource = timeSource
    }

    /// Reads memory in use and its limit now, or says why it cannot.
    public func read() -> Result<Reading, ReadingFailure> {
        switch configuration.limit {
        case .residentBytes(let limit):
            let path = configuration.procRoot + "/self/statm"
            guard let text = ProcFiles.read(path) else {
                return .failure(ReadingFailure("cannot read \(path): \(ProcFiles.lastError)"))
            }
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
            guard fields.count >= 2, let pages = Int(fields[1]) else {
                return .failure(ReadingFailure("\(path) does not hold 'size resident …' page counts"))
            }
            return .success(Reading(used: pages * Int(sysconf(Int32(_SC_PAGESIZE))), limit: limit, source: path))
        case .cgroupFraction(let fraction):
            guard fraction > 0, fraction <= 1 else {
                return .failure(ReadingFailure("the cgroup fraction must be in (0, 1], not \(fraction)"))
            }
            let paths = ProcFiles.cgroupPaths(procRoot: configuration.procRoot)
            var tried: [String] = []
            if let v2 = paths.v2 {
                let directory = configuration.cgroupRoot + (v2 == "/" ? "" : v2)
                tried.append(directory)
                if let current = ProcFiles.read(directory + "/memory.current"),
                    let maximum = ProcFiles.read(directory + "/memory.max")
                {
                    return reading(
                        used: current, limit: maximum, fraction: fraction, source: directory + "/memory.{current,max}")
                }
            }
            if let v1 = paths.v1Memory {
                let directory = configuration.cgroupRoot + "/memory" + (v1 == "/" ? "" : v1)
                tried.append(directory)
                if let usage = ProcFiles.read(directory + "/memory.usage_in_bytes"),
                    let limit = ProcFiles.read(directory + "/memory.limit_in_bytes")
                {
                    return reading(
                        used: usage, limit: limit, fraction: fraction,
                        source: directory + "/memory.{usage,limit}_in_bytes")
                }
            }
            return .failure(
                ReadingFailure(
                    tried.isEmpty
                        ? "no memory cgroup in \(configuration.procRoot)/self/cgroup"
                        : "no readable memory usage and limit in \(tried.joined(separator: " or "))"))
        }
    }

    private func reading(used: String, limit: String, fraction: Double, source: String) -> Result<
        Reading, ReadingFailure
    > {
        let limitText = limit.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let usedBytes = Int(used.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            return .failure(ReadingFailure("\(source): usage is not a number"))
        }
        // v2 writes "max" and v1 a huge number (about 2^63) when the cgroup has no limit.
        guard limitText != "max", let limitBytes = Int(limitText), limitBytes < 1 << 60 else {
            return .failure(ReadingFailure("\(source): the cgroup has no memory limit"))
        }
        return .success(Reading(used: usedBytes, limit: Int(Double(limitBytes) * fraction), source: source))
    }

    /// Why a reading could not be made.
    public struct ReadingFailure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What went wrong, and where.
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Checks until cancelled.
    public func run(onPressure: @escaping @Sendable (MemoryPressureEvent) -> Void) async {
        var complained = false
        while !Task.isCancelled {
            switch read() {
            case .success(let reading):
                if reading.used > reading.limit {
                    onPressure(
                        MemoryPressureEvent(
                            level: reading.used > reading.limit + reading.limit / 10 ? .critical : .warning,
                            reason:
                                "\(reading.used / 1_000_000) MB in use > limit \(reading.limit / 1_000_000) MB (\(reading.source))"
                        ))
                }
            case .failure(let failure):
                if !complained {
                    complained = true
                    logger.warning(
                        "memory pressure: cannot measure memory; no pressure will be reported",
                        metadata: ["reason": "\(failure.description)"])
                }
            }
            try? await timeSource.sleep(for: configuration.interval)
        }
    }
}

#endif
