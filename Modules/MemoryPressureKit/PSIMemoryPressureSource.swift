#if canImport(Glibc)
import TetherConcurrency
import Foundation
public import Logging
public import TetherClock
import Synchronization

/// Memory pressure from Linux's pressure-stall information (PSI): real pressure, as the kernel measures it.
///
/// It watches the process's cgroup v2 `memory.pressure` file when it can read one, and `/proc/pressure/memory`
/// otherwise. Where the kernel allows, it registers a PSI trigger ("some" stall of `stall` within `window`) and
/// waits for `POLLPRI` — no polling at all; otherwise it reads `avg10` every `pollingInterval` and reports pressure
/// when the share of time stalled reaches `avg10Threshold` percent. Where neither works (no PSI, permission
/// denied), it logs why once and reports nothing.
public struct PSIMemoryPressureSource: MemoryPressureSource {
    /// Where to look and when to report.
    public struct Configuration: Sendable {
        /// The PSI file; nil picks the process's cgroup v2 `memory.pressure`, then `/proc/pressure/memory`.
        public var path: String?
        /// The stall that fires the trigger: time some task waited for memory, within `window`.
        public var stall: Duration
        /// The trigger's window. The kernel accepts 500 ms to 10 s (1 s was refused on our machines: 2 s works).
        public var window: Duration
        /// Whether to try a kernel trigger before polling.
        public var usesTrigger: Bool
        /// How often to read `avg10` when polling.
        public var pollingInterval: Duration
        /// The `avg10` percentage at which polling reports pressure.
        public var avg10Threshold: Double
        /// Where `/proc` is (tests point it elsewhere).
        public var procRoot: String
        /// Where the cgroup v2 hierarchy is mounted.
        public var cgroupRoot: String

        /// Makes a configuration with the defaults: 150 ms stall in 2 s, polling every second at 10 %.
        public init(
            path: String? = nil, stall: Duration = .milliseconds(150), window: Duration = .seconds(2),
            usesTrigger: Bool = true, pollingInterval: Duration = .seconds(1), avg10Threshold: Double = 10,
            procRoot: String = "/proc", cgroupRoot: String = "/sys/fs/cgroup"
        ) {
            self.path = path
            self.stall = stall
            self.window = window
            self.usesTrigger = usesTrigger
            self.pollingInterval = pollingInterval
            self.avg10Threshold = avg10Threshold
            self.procRoot = procRoot
            self.cgroupRoot = cgroupRoot
        }
    }

    /// How the source works on this machine.
    public enum Mode: Sendable, Equatable {
        /// A kernel trigger on this file.
        case trigger(path: String)
        /// Polling `avg10` in this file (why the trigger could not be used, if it was tried).
        case polling(path: String, reason: String?)
        /// Not at all, and why.
        case unavailable(reason: String)
    }

    /// "linux-psi".
    public let name = "linux-psi"
    /// The configuration in use.
    public let configuration: Configuration
    private let logger: Logger
    private let timeSource: any TimeSource

    /// Makes the source; when it polls, it waits between readings on `timeSource` (a `ManualTimeSource` makes
    /// every reading a step a test takes).
    public init(
        configuration: Configuration = Configuration(), logger: Logger = Logger(label: "tether.memory-pressure"),
        timeSource: any TimeSource = .system
    ) {
        self.configuration = configuration
        self.logger = logger
        self.timeSource = timeSource
    }

    /// Which file the source reads: the configured one, the cgroup's, or the system-wide one.
    public var resolvedPath: String? {
        if let path = configuration.path { return path }
        if let v2 = ProcFiles.cgroupPaths(procRoot: configuration.procRoot).v2 {
            let candidate = configuration.cgroupRoot + (v2 == "/" ? "" : v2) + "/memory.pressure"
            if ProcFiles.read(candidate) != nil { return candidate }
        }
        let system = configuration.procRoot + "/pressure/memory"
        return ProcFiles.read(system) != nil ? system : nil
    }

    /// Finds out how the source would work here, without watching.
    public func probe() -> Mode {
        switch openTrigger() {
        case .armed(let trigger):
            trigger.close()
            return .trigger(path: trigger.path)
        case .instead(let mode):
            return mode
        }
    }

    /// Watches until cancelled.
    public func run(onPressure: @escaping @Sendable (MemoryPressureEvent) -> Void) async {
        switch openTrigger() {
        case .armed(let trigger):
            logger.debug("memory pressure: PSI trigger registered", metadata: ["path": "\(trigger.path)"])
            let fellBack = await trigger.watch(onPressure: onPressure)
            if let reason = fellBack {
                logger.warning(
                    "memory pressure: PSI trigger stopped working; polling instead",
                    metadata: ["path": "\(trigger.path)", "reason": "\(reason)"])
                await poll(trigger.path, onPressure: onPressure)
            }
        case .instead(.polling(let path, let reason)):
            if let reason {
                logger.notice(
                    "memory pressure: PSI trigger unavailable; polling avg10",
                    metadata: ["path": "\(path)", "reason": "\(reason)"])
            }
            await poll(path, onPressure: onPressure)
        case .instead(.unavailable(let reason)):
            logger.warning(
                "memory pressure: PSI unavailable; no pressure will be reported", metadata: ["reason": "\(reason)"])
            await waitForCancellation()
        case .instead(.trigger):
            await waitForCancellation()
        }
    }

    /// An armed trigger, or how the source must work instead.
    enum Opening {
        case armed(PSITrigger)
        case instead(Mode)
    }

    /// Opens and arms a trigger, or says how the source must work instead.
    private func openTrigger() -> Opening {
        guard let path = resolvedPath else {
            let tried = configuration.path ?? configuration.procRoot + "/pressure/memory"
            return .instead(.unavailable(reason: "cannot read \(tried): \(ProcFiles.lastError)"))
        }
        guard parseAvg10(ProcFiles.read(path) ?? "") != nil else {
            return .instead(.unavailable(reason: "\(path) has no 'some avg10=' line"))
        }
        guard configuration.usesTrigger else { return .instead(.polling(path: path, reason: nil)) }
        switch PSITrigger.open(
            path: path, stallMicroseconds: Self.microseconds(configuration.stall),
            windowMicroseconds: Self.microseconds(configuration.window))
        {
        case .success(let trigger): return .armed(trigger)
        case .failure(let reason): return .instead(.polling(path: path, reason: reason.text))
        }
    }

    private func poll(_ path: String, onPressure: @escaping @Sendable (MemoryPressureEvent) -> Void) async {
        var warnedUnreadable = false
        while !Task.isCancelled {
            if let avg10 = parseAvg10(ProcFiles.read(path) ?? "") {
                warnedUnreadable = false
                if avg10 >= configuration.avg10Threshold {
                    let level: MemoryPressureLevel = avg10 >= 2 * configuration.avg10Threshold ? .critical : .warning
                    onPressure(MemoryPressureEvent(level: level, reason: "PSI some avg10=\(avg10)% in \(path)"))
                }
            } else if !warnedUnreadable {
                warnedUnreadable = true
                logger.warning("memory pressure: cannot read PSI now", metadata: ["path": "\(path)"])
            }
            try? await timeSource.sleep(for: configuration.pollingInterval)
        }
    }

    /// A duration in whole microseconds, the unit PSI triggers take.
    private static func microseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
    }

    /// The `avg10` of the `some` line: "some avg10=1.23 avg60=… total=…".
    func parseAvg10(_ text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix("some ") {
            for field in line.split(separator: " ") where field.hasPrefix("avg10=") {
                return Double(field.dropFirst("avg10=".count))
            }
        }
        return nil
    }
}

/// An armed kernel PSI trigger: a file descriptor that becomes readable with `POLLPRI` when the stall is exceeded.
struct PSITrigger: Sendable {
    let path: String
    let descriptor: Int32

    struct Failure: Error {
        let text: String
    }

    static func open(path: String, stallMicroseconds: Int, windowMicroseconds: Int) -> Result<PSITrigger, Failure> {
        let descriptor = Glibc.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(Failure(text: "open for writing: \(ProcFiles.lastError)")) }
        let request = "some \(stallMicroseconds) \(windowMicroseconds)"
        let written = request.withCString { Glibc.write(descriptor, $0, strlen($0) + 1) }
        guard written >= 0 else {
            let reason = ProcFiles.lastError
            Glibc.close(descriptor)
            return .failure(Failure(text: "registering '\(request)': \(reason)"))
        }
        // A real trigger is quiet until the stall is exceeded; an ordinary file (which accepts any write) polls as
        // always readable and would make the watch loop spin. Refuse it.
        var probe = pollfd(fd: descriptor, events: Int16(POLLPRI | POLLIN), revents: 0)
        if poll(&probe, 1, 0) > 0, probe.revents & Int16(POLLIN) != 0 {
            Glibc.close(descriptor)
            return .failure(Failure(text: "\(path) is not a PSI file: it polls as always readable"))
        }
        return .success(PSITrigger(path: path, descriptor: descriptor))
    }

    func close() {
        Glibc.close(descriptor)
    }

    /// Waits for the trigger on a thread of its own (a blocking `poll`, never on the cooperative pool) until the
    /// task is cancelled; returns nil then, or why the trigger stopped working.
    func watch(onPressure: @escaping @Sendable (MemoryPressureEvent) -> Void) async -> String? {
        let stop = StopFlag()
        let descriptor = self.descriptor
        let path = self.path
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                Thread.detachNewThread {
                    var outcome: String?
                    var poller = pollfd(fd: descriptor, events: Int16(POLLPRI), revents: 0)
                    while !stop.isSet {
                        poller.revents = 0
                        let ready = poll(&poller, 1, 200)
                        if ready < 0 {
                            if errno == EINTR { continue }
                            outcome = "poll: \(ProcFiles.lastError)"
                            break
                        }
                        if ready == 0 { continue }
                        if poller.revents & Int16(POLLERR) != 0 {
                            outcome = "the trigger reported an error (its file went away?)"
                            break
                        }
                        if poller.revents & Int16(POLLPRI) != 0 {
                            onPressure(MemoryPressureEvent(level: .warning, reason: "PSI trigger fired on \(path)"))
                        } else {
                            outcome = "unexpected poll events \(poller.revents) on \(path)"
                            break
                        }
                    }
                    Glibc.close(descriptor)
                    continuation.resume(returning: outcome)
                }
            }
        } onCancel: {
            stop.set()
        }
    }
}

/// A flag set once, from any thread.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
#endif
