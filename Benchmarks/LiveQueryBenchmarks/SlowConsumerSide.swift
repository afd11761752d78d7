import BenchmarkSupport
import TetherConcurrency

/// One side of scenario 2: how it writes a commit (the document chosen by the commit's index in its block, and the
/// seq it writes), and how it starts observing for a consumer — returning what ends the observation once a block
/// is measured.
struct SlowConsumerSide {
    let name: String
    let write: @Sendable (Int, Int) async throws -> Void
    let observe: (Consumer) async throws -> () async throws -> Void

    init(
        name: String, write: @escaping @Sendable (Int, Int) async throws -> Void,
        observe: @escaping (Consumer) async throws -> () async throws -> Void
    ) {
        self.name = name
        self.write = write
        self.observe = observe
    }

    /// What each side records: the first six per run, the others per observed block (`ready →` only for blocks
    /// whose consumer was busy as the last commit returned: ``Consumer/Figures/consumerWaited``). CPU overhead is the
    /// process's CPU time over the observed blocks against the unobserved blocks' (every thread: the writer's, the
    /// engine's, the consumer's); the wake-ups are the voluntary context switches the observed blocks added, per
    /// delivery.
    static let figures = [
        "writer (ms)", "writer, unobserved (ms)", "writer overhead (%)", "CPU overhead (%)",
        "thread wake-ups per delivery", "blocks whose consumer waited for the last commit", "deliveries",
        "last commit → final (ms)", "ready → final (µs)", "of which before the read (µs)", "peak RSS delta (KB)",
    ]

    /// One run: `blocks` pairs of blocks of `perBlock` commits, one block with nothing observed and one with an
    /// observer, the pair's order alternating from block to block and from run to run. The writer's overhead is the
    /// observed blocks' total time against the unobserved blocks': the machine's and the file's drift during a run
    /// cancels out, where one long stretch of each let it move the figure as much as the overhead itself. Each
    /// observed block ends with a final state of its own, so each gives a sample of the time to it.
    func run(
        _ run: Int, blocks: Int, of perBlock: Int, seqs: SeqCounter, record: (String, Int) -> Void
    ) async throws {
        var (observed, unobserved) = (0, 0)
        var (observedUsage, unobservedUsage) = (ProcessUsage.zero, ProcessUsage.zero)
        var (deliveries, waited) = (0, 0)
        let unobservedBlock = {
            let before = ProcessUsage.now()
            unobserved += try await timedWrites(count: perBlock, seqBase: seqs.take(perBlock), write: write)
            unobservedUsage += ProcessUsage.now() - before
        }
        for block in 0..<blocks {
            let unobservedFirst = (run + block) % 2 == 0
            if unobservedFirst { try await unobservedBlock() }
            let consumer = Consumer()
            let before = ProcessUsage.now()
            let end = try await observe(consumer)
            try await waitUntil { consumer.deliveries > 0 }
            let figures = try await consumer.measure(count: perBlock, seqBase: seqs.take(perBlock), write: write)
            try await end()
            observedUsage += ProcessUsage.now() - before
            deliveries += figures.deliveries
            observed += figures.writer
            record("\(name) deliveries", figures.deliveries)
            record("\(name) last commit → final (ms)", figures.toFinal)
            if figures.consumerWaited {
                waited += 1
            } else {
                record("\(name) ready → final (µs)", figures.readyToFinal)
                record("\(name) of which before the read (µs)", figures.readyToHanded)
            }
            record("\(name) peak RSS delta (KB)", figures.peakResidentDelta)
            if !unobservedFirst { try await unobservedBlock() }
        }
        record("\(name) blocks whose consumer waited for the last commit", waited)
        record("\(name) writer (ms)", observed)
        record("\(name) writer, unobserved (ms)", unobserved)
        record("\(name) writer overhead (%)", (observed - unobserved) * 100 / unobserved)
        let cpu = (observedUsage.cpuMicroseconds, unobservedUsage.cpuMicroseconds)
        record("\(name) CPU overhead (%)", (cpu.0 - cpu.1) * 100 / max(cpu.1, 1))
        record(
            "\(name) thread wake-ups per delivery",
            (observedUsage.voluntarySwitches - unobservedUsage.voluntarySwitches) / max(deliveries, 1))
    }
}

/// The seq numbers commits write, counting up across sides and blocks: a result's newest seq tells which commit it
/// reflects.
final class SeqCounter: Sendable {
    private let next = LockedValue(0)

    /// `count` numbers, from the one returned.
    func take(_ count: Int) -> Int {
        next.withLock { next in
            defer { next += count }
            return next
        }
    }
}

/// The time (ms) `count` commits take, one after the other, with resident memory sampled as in an observed block
/// (``Consumer/measure(count:seqBase:write:)``), so that the sampler's own cost is on both sides of the overhead.
func timedWrites(count: Int, seqBase: Int, write: (Int, Int) async throws -> Void) async throws -> Int {
    let sampler = ResidentSampler()
    defer { _ = sampler.stop() }
    let start = nowMicroseconds()
    for i in 0..<count { try await write(i, seqBase + i) }
    return (nowMicroseconds() - start) / 1_000
}
