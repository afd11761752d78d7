import Foundation
import InMemoryLogging
import Logging
import MemoryPressureKit
import RegistryKit
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting

/// Runs a polling `source` for exactly `checks` checks on `clock`, and returns its events. A check is over when the
/// source sleeps on the clock again, so "no event" means "checked `checks` times and saw nothing", however slow the
/// machine.
func events(
    of source: any MemoryPressureSource, on clock: ManualTimeSource, checks: Int, interval: Duration
) async -> [MemoryPressureEvent] {
    let collected = LockedValue<[MemoryPressureEvent]>([])
    let task = Task { await source.run { event in collected.withLock { $0.append(event) } } }
    for check in 1...checks {
        #expect(await clock.waitForSleepers(1), "check \(check) ends with a sleep on the clock")
        if check < checks { clock.advance(by: interval) }
    }
    task.cancel()
    await task.value
    return collected.withLock { $0 }
}

/// A registry's value.
final class Item: Sendable {
    let key: String
    init(_ key: String) { self.key = key }
}

/// A temporary directory with files in it, removed at deinit.
final class Fixture {
    let root: URL
    init(_ files: [String: String]) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("tether-\(UUID().uuidString)")
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
    }
    deinit { try? FileManager.default.removeItem(at: root) }
    func path(_ component: String = "") -> String { root.appendingPathComponent(component).path }
}

/// A logger that keeps every entry, debug included.
func capturingLogger() -> (Logger, InMemoryLogHandler) {
    let handler = InMemoryLogHandler()
    var logger = Logger(label: "test", factory: { _ in handler })
    logger.logLevel = .debug
    return (logger, handler)
}

@Suite("Memory pressure")
struct MemoryPressureTests {
    @Test("A monitor flushes its registry on each event from a manual source")
    func manualSourceFlushes() async {
        let registry = Registry<String, Item>()
        let source = ManualMemoryPressureSource()
        let monitor = MemoryPressureMonitor(source: source) { _ in registry.flushUnused() }
        let task = Task { await monitor.run() }
        while source.watcherCount == 0 { await Task.yield() }
        do { _ = registry.instance(for: "/a") { Item("/a") } }
        #expect(registry.count == 1)
        source.signal(.critical, reason: "test")
        #expect(registry.count == 0, "flushed by the pressure event")
        task.cancel()
        await task.value
        #expect(source.watcherCount == 0, "the monitor stopped when cancelled")
    }

    @Test("simulate() reaches every running monitor, whatever its source, and none once they stop")
    func processWideSimulation() async {
        // A scope of the test's own: the process-wide one would reach the monitors of tests running beside it.
        await MemoryPressureMonitor.$simulated.withValue(ManualMemoryPressureSource()) {
            let heard = LockedValue<[String]>([])
            let sources = [ManualMemoryPressureSource(), ManualMemoryPressureSource()]
            let tasks = sources.enumerated().map { index, source in
                let monitor = MemoryPressureMonitor(source: source) { event in
                    heard.withLock { $0.append("\(index): \(event.level) \(event.reason)") }
                }
                return Task { await monitor.run() }
            }
            while MemoryPressureMonitor.runningCount < 2 { await Task.yield() }
            #expect(MemoryPressureMonitor.simulate(.critical, reason: "drill") == 2)
            #expect(heard.withLock { $0.sorted() } == ["0: critical drill", "1: critical drill"])
            sources[0].signal(.warning, reason: "own")
            #expect(heard.withLock { $0.last } == "0: warning own", "each still hears its own source")
            for task in tasks { task.cancel() }
            for task in tasks { await task.value }
            #expect(MemoryPressureMonitor.runningCount == 0)
            #expect(MemoryPressureMonitor.simulate() == 0, "a stopped monitor is not told")
            #expect(heard.withLock { $0.count } == 3)
        }
    }

    @Test(
        "On this machine PSI works: by kernel trigger or, failing that, by polling",
        .enabled(if: FileManager.default.isReadableFile(atPath: "/proc/pressure/memory")))
    func psiWorksHere() async throws {
        let source = PSIMemoryPressureSource()
        switch source.probe() {
        case .trigger(let path), .polling(let path, _):
            #expect(path.hasSuffix("memory.pressure") || path.hasSuffix("/pressure/memory"))
        case .unavailable(let reason):
            Issue.record("PSI readable but unusable: \(reason)")
        }
        // Watch until the source has settled into its way of working — the trigger registered, or the first reading
        // taken — then stop: nothing it said on the way may be a complaint.
        let (logger, log) = capturingLogger()
        let clock = ManualTimeSource()
        let watched = PSIMemoryPressureSource(logger: logger, timeSource: clock)
        let collected = LockedValue<[MemoryPressureEvent]>([])
        let task = Task { await watched.run { event in collected.withLock { $0.append(event) } } }
        try await eventually {
            clock.sleeperCount > 0 || log.entries.contains { "\($0.message)".contains("PSI trigger registered") }
        }
        task.cancel()
        await task.value
        #expect(collected.withLock { $0 }.allSatisfy { !$0.reason.isEmpty })
        #expect(log.entries.allSatisfy { $0.level < .warning }, "no complaints: \(log.entries.map(\.message))")
    }

    @Test(
        "A trigger window the kernel refuses falls back to polling, with the kernel's reason",
        .enabled(if: FileManager.default.isReadableFile(atPath: "/proc/pressure/memory")))
    func refusedTriggerWindow() {
        let source = PSIMemoryPressureSource(
            configuration: .init(path: "/proc/pressure/memory", stall: .milliseconds(50), window: .milliseconds(100)))
        guard case .polling(let path, let reason?) = source.probe() else {
            Issue.record("expected polling with a reason, got \(source.probe())")
            return
        }
        #expect(path == "/proc/pressure/memory")
        #expect(reason.contains("some 50000 100000"), "says which trigger was refused: \(reason)")
    }

    @Test("PSI polling reports pressure when avg10 reaches the threshold, critical at twice it")
    func psiPolling() async throws {
        let fixture = try Fixture([
            "memory":
                "some avg10=15.00 avg60=3.00 avg300=1.00 total=99\nfull avg10=1.00 avg60=0.00 avg300=0.00 total=9\n"
        ])
        let configuration = PSIMemoryPressureSource.Configuration(
            path: fixture.path("memory"), usesTrigger: false, pollingInterval: .seconds(2), avg10Threshold: 10)
        let clock = ManualTimeSource()
        let source = PSIMemoryPressureSource(configuration: configuration, timeSource: clock)
        #expect(source.probe() == .polling(path: fixture.path("memory"), reason: nil))
        let seen = await events(of: source, on: clock, checks: 3, interval: .seconds(2))
        #expect(seen.count == 3, "one event per reading at or above the threshold")
        #expect(seen.first?.level == .warning)
        #expect(seen.first?.reason.contains("avg10=15.0") == true)

        let calm = try Fixture(["memory": "some avg10=9.99 avg60=3.00 avg300=1.00 total=99\n"])
        let calmClock = ManualTimeSource()
        let quiet = PSIMemoryPressureSource(
            configuration: .init(
                path: calm.path("memory"), usesTrigger: false, pollingInterval: .seconds(2), avg10Threshold: 10),
            timeSource: calmClock)
        #expect(await events(of: quiet, on: calmClock, checks: 3, interval: .seconds(2)).isEmpty)

        let critical = try Fixture(["memory": "some avg10=20.00 avg60=3.00 avg300=1.00 total=99\n"])
        let criticalClock = ManualTimeSource()
        let criticalSource = PSIMemoryPressureSource(
            configuration: .init(
                path: critical.path("memory"), usesTrigger: false, pollingInterval: .seconds(2), avg10Threshold: 10),
            timeSource: criticalClock)
        let criticalSeen = await events(of: criticalSource, on: criticalClock, checks: 1, interval: .seconds(2))
        #expect(criticalSeen.map(\.level) == [.critical], "twice the threshold is critical")
    }

    @Test("A file that only looks like PSI is refused as a trigger, and polled instead")
    func ordinaryFileIsNotATrigger() throws {
        let fixture = try Fixture(["memory": "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"])
        let source = PSIMemoryPressureSource(configuration: .init(path: fixture.path("memory")))
        guard case .polling(_, let reason?) = source.probe() else {
            Issue.record("expected polling with a reason, got \(source.probe())")
            return
        }
        #expect(reason.contains("not a PSI file"))
    }

    @Test("Where PSI cannot work, the source says so once and waits quietly until cancelled")
    func psiUnavailable() async throws {
        let (logger, log) = capturingLogger()
        let source = PSIMemoryPressureSource(
            configuration: .init(path: "/nonexistent/pressure/memory"), logger: logger)
        guard case .unavailable(let reason) = source.probe() else {
            Issue.record("expected unavailable")
            return
        }
        #expect(reason.contains("/nonexistent/pressure/memory"))
        // It says so at once, then only waits: after the warning, nothing can come but the end of the watch.
        let collected = LockedValue<[MemoryPressureEvent]>([])
        let task = Task { await source.run { event in collected.withLock { $0.append(event) } } }
        try await eventually { log.entries.contains { $0.level == .warning } }
        task.cancel()
        await task.value
        #expect(collected.withLock { $0 }.isEmpty)
        #expect(log.entries.filter { $0.level == .warning }.count == 1)
    }

    @Test("Resident set above the limit is pressure; below it is not")
    func residentLimit() async {
        let clock = ManualTimeSource()
        let over = ResidentMemoryPressureSource(
            configuration: .init(limit: .residentBytes(1), interval: .seconds(1)), timeSource: clock)
        let seen = await events(of: over, on: clock, checks: 2, interval: .seconds(1))
        #expect(seen.count == 2, "one event per check")
        #expect(seen.first?.level == .critical)
        let underClock = ManualTimeSource()
        let under = ResidentMemoryPressureSource(
            configuration: .init(limit: .residentBytes(1 << 50), interval: .seconds(1)), timeSource: underClock)
        #expect(await events(of: under, on: underClock, checks: 3, interval: .seconds(1)).isEmpty)
        guard case .success(let reading) = under.read() else {
            Issue.record("cannot read /proc/self/statm")
            return
        }
        #expect(reading.used > 1_000_000, "a Swift test process is larger than a megabyte")
    }

    @Test("cgroup v2: usage against memory.max; 'max' means no limit")
    func cgroupV2() async throws {
        let limited = try Fixture([
            "proc/self/cgroup": "0::/app\n", "cgroup/app/memory.current": "900\n", "cgroup/app/memory.max": "1000\n",
        ])
        let clock = ManualTimeSource()
        let source = ResidentMemoryPressureSource(
            configuration: .init(
                limit: .cgroupFraction(0.8), interval: .seconds(1), procRoot: limited.path("proc"),
                cgroupRoot: limited.path("cgroup")),
            timeSource: clock)
        #expect(
            try source.read().get()
                == .init(used: 900, limit: 800, source: limited.path("cgroup/app") + "/memory.{current,max}"))
        #expect(await events(of: source, on: clock, checks: 1, interval: .seconds(1)).first?.level == .critical)

        let unlimited = try Fixture([
            "proc/self/cgroup": "0::/app\n", "cgroup/app/memory.current": "900\n", "cgroup/app/memory.max": "max\n",
        ])
        let (logger, log) = capturingLogger()
        let quietClock = ManualTimeSource()
        let quiet = ResidentMemoryPressureSource(
            configuration: .init(
                limit: .cgroupFraction(0.8), interval: .seconds(1), procRoot: unlimited.path("proc"),
                cgroupRoot: unlimited.path("cgroup")),
            logger: logger, timeSource: quietClock)
        #expect(await events(of: quiet, on: quietClock, checks: 3, interval: .seconds(1)).isEmpty)
        #expect(log.entries.filter { $0.level == .warning }.count == 1, "said once, not every check")
        let reason = log.entries.first.map { "\($0.metadata["reason"] ?? "")" } ?? ""
        #expect(reason.contains("no memory limit"))
    }

    @Test("cgroup v1: memory.usage_in_bytes against memory.limit_in_bytes")
    func cgroupV1() throws {
        let fixture = try Fixture([
            "proc/self/cgroup": "12:pids:/app\n7:cpu,cpuacct:/app\n4:memory:/app\n",
            "cgroup/memory/app/memory.usage_in_bytes": "600\n", "cgroup/memory/app/memory.limit_in_bytes": "1000\n",
        ])
        let source = ResidentMemoryPressureSource(
            configuration: .init(
                limit: .cgroupFraction(0.5), procRoot: fixture.path("proc"), cgroupRoot: fixture.path("cgroup")))
        let reading = try source.read().get()
        #expect(reading.used == 600)
        #expect(reading.limit == 500)
    }

    @Test("Bad settings and missing files are reported with what was wrong and where")
    func badInputs() throws {
        let nowhere = ResidentMemoryPressureSource(
            configuration: .init(limit: .residentBytes(1), procRoot: "/nonexistent"))
        #expect(throws: ResidentMemoryPressureSource.ReadingFailure.self) { try nowhere.read().get() }
        #expect("\(nowhere.read())".contains("/nonexistent/self/statm"))
        let fraction = ResidentMemoryPressureSource(configuration: .init(limit: .cgroupFraction(1.5)))
        #expect("\(fraction.read())".contains("(0, 1]"))
        let noCgroup = try Fixture(["proc/self/cgroup": "3:cpu:/x\n"])
        let missing = ResidentMemoryPressureSource(
            configuration: .init(
                limit: .cgroupFraction(0.9), procRoot: noCgroup.path("proc"), cgroupRoot: noCgroup.path("cgroup")))
        #expect("\(missing.read())".contains("no memory cgroup"))
    }
}
