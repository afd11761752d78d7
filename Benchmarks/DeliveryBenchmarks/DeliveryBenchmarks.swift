// DeliveryKit benchmarks: Ditto's "avoiding excessive memory" scenario under every policy, against the naive
// dispatch-every-snapshot pattern, plus the overhead of one delivery.
//   TETHER_BENCHMARKS=1 swift package benchmark --target DeliveryBenchmarks

import Benchmark
import DeliveryKit
import Dispatch
import Foundation
import Synchronization

/// A ~64 KiB snapshot whose live instances are counted.
final class Snapshot: Sendable {
    let bytes: [UInt8]
    let value: Int
    let census: Census

    init(_ value: Int, census: Census) {
        self.value = value
        self.census = census
        bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: value), count: 64 * 1024)
        census.born()
    }

    deinit { census.died() }
}

/// Live snapshots now and at most; the last value processed.
final class Census: Sendable {
    let live = Atomic<Int>(0)
    let highWater = Atomic<Int>(0)
    let processed = Atomic<Int>(0)
    let deliveries = Atomic<Int>(0)
    /// The most alive right after a submit returned, when the producer holds none: what the observer holds.
    let heldHighWater = Atomic<Int>(0)

    func sampleHeld() {
        let now = live.load(ordering: .relaxed)
        if now > heldHighWater.load(ordering: .relaxed) { heldHighWater.store(now, ordering: .relaxed) }
    }

    func born() {
        let now = live.add(1, ordering: .relaxed).newValue
        var most = highWater.load(ordering: .relaxed)
        while now > most {
            let (done, seen) = highWater.compareExchange(expected: most, desired: now, ordering: .relaxed)
            if done { break }
            most = seen
        }
    }

    func died() { live.subtract(1, ordering: .relaxed) }

    func process(_ snapshot: Snapshot) {
        usleep(1000)  // the slow consumer: 1 ms per snapshot
        blackHole(snapshot.bytes[0])
        deliveries.add(1, ordering: .relaxed)
        processed.store(snapshot.value, ordering: .releasing)
    }
}

/// Samples this process's resident memory every 5 ms while running.
final class ResidentSampler: Sendable {
    private let peak = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)

    init() {
        Thread.detachNewThread { [self] in
            while running.load(ordering: .acquiring) {
                sample()
                usleep(5_000)
            }
        }
    }

    func sample() {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return }
        let bytes = pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        var most = peak.load(ordering: .relaxed)
        while bytes > most {
            let (done, seen) = peak.compareExchange(expected: most, desired: bytes, ordering: .relaxed)
            if done { break }
            most = seen
        }
    }

    /// Stops sampling; the peak in MB.
    func stop() -> Int {
        sample()
        running.store(false, ordering: .releasing)
        return peak.load(ordering: .relaxed) / 1_000_000
    }
}

enum Policy: String, CaseIterable {
    case nextSignal = "next-signal"
    case deliverOnQueue = "deliver-on-queue"
    case immediate
    case naive = "naive: dispatch every snapshot (BAD)"
}

/// Pushes `count` snapshots as fast as possible and waits until the consumer has processed the last.
func runScenario(_ policy: Policy, count: Int, benchmark: Benchmark) {
    let census = Census()
    let sampler = ResidentSampler()
    let processing = DispatchQueue(label: "processing")
    let started = ContinuousClock.now

    var lane: DeliveryLane<Snapshot>?
    switch policy {
    case .nextSignal:
        lane = .nextSignal { delivery, signalNext in
            let box = Box(delivery.payload)
            processing.async {
                if let snapshot = box.take() { census.process(snapshot) }  // processed and released …
                signalNext()  // … then signalled
            }
        }
    case .deliverOnQueue:
        lane = .deliverOn(.queue(processing)) { delivery in census.process(delivery.payload) }
    case .immediate:
        lane = .immediate { delivery in census.process(delivery.payload) }
    case .naive:
        lane = nil
    }
    for value in 1...count {
        let snapshot = Snapshot(value, census: census)
        if let lane {
            lane.submit(snapshot)
            census.sampleHeld()
        } else {
            processing.async { census.process(snapshot) }  // the BAD pattern: every snapshot held until processed
            census.sampleHeld()
        }
    }
    while census.processed.load(ordering: .acquiring) != count { usleep(500) }
    let quiesce = ContinuousClock.now - started
    let peak = sampler.stop()
    benchmark.measurement(Metric.held, census.heldHighWater.load(ordering: .relaxed))
    benchmark.measurement(Metric.highWater, census.highWater.load(ordering: .relaxed))
    benchmark.measurement(Metric.deliveries, census.deliveries.load(ordering: .relaxed))
    benchmark.measurement(Metric.peakResident, peak)
    benchmark.measurement(
        Metric.quiesce, Int(quiesce.components.seconds * 1000 + quiesce.components.attoseconds / 1_000_000_000_000_000))
    withExtendedLifetime(lane) {}
}

/// The scenario's own measurements (package-benchmark reports a custom metric only when it is configured).
enum Metric {
    static let held = BenchmarkMetric.custom("Snapshots held by lane + observer, high-water", useScalingFactor: false)
    static let highWater = BenchmarkMetric.custom(
        "Live snapshots incl. producer's, high-water", useScalingFactor: false)
    static let deliveries = BenchmarkMetric.custom("Deliveries", useScalingFactor: false)
    static let peakResident = BenchmarkMetric.custom("Peak RSS, sampled (MB)", useScalingFactor: false)
    static let quiesce = BenchmarkMetric.custom("Time to quiesce (ms)", useScalingFactor: false)
}

let benchmarks: @Sendable () -> Void = {
    let scenario = Benchmark.Configuration(
        metrics: [
            .peakMemoryResident, Metric.held, Metric.highWater, Metric.deliveries, Metric.peakResident, Metric.quiesce,
        ],
        warmupIterations: 0,
        maxDuration: .seconds(600),
        maxIterations: 1
    )
    for count in [10_000, 100_000] {
        for policy in Policy.allCases {
            Benchmark("Ditto scenario, \(count) × 64 KiB, 1 ms consumer: \(policy.rawValue)", configuration: scenario) {
                benchmark in
                runScenario(policy, count: count, benchmark: benchmark)
            }
        }
    }

    let overhead = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal],
        warmupIterations: 1_000,
        scalingFactor: .kilo,
        maxDuration: .seconds(3)
    )

    // Immediate delivery of a small payload, against calling the same handler directly.
    Benchmark("Overhead: immediate delivery of an Int (per 1,000)", configuration: overhead) { benchmark in
        let sink = Atomic<Int>(0)
        let handler: @Sendable (Delivery<Int>) -> Void = { sink.add($0.payload, ordering: .relaxed) }
        let lane = DeliveryLane<Int>.immediate(handler)
        benchmark.startMeasurement()
        for value in benchmark.scaledIterations { lane.submit(value) }
        benchmark.stopMeasurement()
    }
    Benchmark("Baseline: direct call of the same handler (per 1,000)", configuration: overhead) { benchmark in
        let sink = Atomic<Int>(0)
        let handler: @Sendable (Delivery<Int>) -> Void = { sink.add($0.payload, ordering: .relaxed) }
        benchmark.startMeasurement()
        for value in benchmark.scaledIterations { handler(Delivery(payload: value)) }
        benchmark.stopMeasurement()
    }

    // One delivery through deliver-on-queue: each handler submits the next payload, so every submit is delivered
    // and every delivery crosses the queue.
    Benchmark("Overhead: deliver-on-queue, one delivery each (per 1,000)", configuration: overhead) { benchmark in
        let done = DispatchSemaphore(value: 0)
        let total = benchmark.scaledIterations.count
        let holder = LaneBox()
        let lane = DeliveryLane<Int>.deliverOn(.serialQueue()) { delivery in
            if delivery.payload == total { done.signal() } else { holder.lane?.submit(delivery.payload + 1) }
        }
        holder.lane = lane
        benchmark.startMeasurement()
        lane.submit(1)
        done.wait()
        benchmark.stopMeasurement()
    }

    // The next-signal cycle of a live query's lane, inline: each round submits twice while the observer is busy (the
    // second replaces the first), then signals, which delivers the latest to the handler — a payload released at
    // the coalesce and the last one kept for `skipIf` replaced at the delivery. Counts the lane's allocations.
    Benchmark("Overhead: next-signal, coalesce and skipIf, one delivery each (per 1,000)", configuration: overhead) {
        benchmark in
        let pending = SignalSlot()
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .inline, skipIf: { $0 == $1 }) { delivery, signalNext in
            blackHole(delivery.payload)
            pending.signal = signalNext
        }
        lane.submit(0)
        benchmark.startMeasurement()
        for value in benchmark.scaledIterations {
            lane.submit(2 * value + 1)
            lane.submit(2 * value + 2)
            pending.signal?()
        }
        benchmark.stopMeasurement()
        withExtendedLifetime(lane) {}
    }
}

/// Keeps the latest signal a handler was given, for the producer to call.
final class SignalSlot: Sendable {
    private let slot = Mutex<SignalNext?>(nil)
    var signal: SignalNext? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}

/// Hands a snapshot to other work, which takes it out (and so releases it) when done.
final class Box: Sendable {
    private let slot: Mutex<Snapshot?>
    init(_ snapshot: Snapshot) { slot = Mutex(snapshot) }
    func take() -> Snapshot? { slot.withLock { $0.take() } }
}

/// Lets a handler reach its own lane.
final class LaneBox: Sendable {
    private let slot = Mutex<DeliveryLane<Int>?>(nil)
    var lane: DeliveryLane<Int>? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}
