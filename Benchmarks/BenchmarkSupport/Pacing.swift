import Foundation
import TetherConcurrency

/// When each commit's `seq` first reached a handler: a result's newest `seq` is the newest commit it reflects.
public final class Arrivals: Sendable {
    private let first = LockedValue<[Int: Int]>([:])

    public init() {}

    /// A handler received a result whose newest commit is `seq`.
    public func saw(_ seq: Int) {
        saw(seq, at: nowMicroseconds())
    }

    /// A handler received it at `time` (``nowMicroseconds()``: the monotonic clock is the machine's, so a handler in
    /// another process reports its own reading).
    public func saw(_ seq: Int, at time: Int) {
        guard seq >= 0 else { return }
        first.withLock { if $0[seq] == nil { $0[seq] = time } }
    }

    public func arrived(_ seq: Int) -> Bool { first.withLock { $0[seq] != nil } }
    public func at(_ seq: Int) -> Int? { first.withLock { $0[seq] } }
}

/// What a paced run measured, in microseconds.
public struct PacedRun: Sendable {
    /// From the start of each commit to the first handler call with its result (a commit merged into a later
    /// result before any handler saw it has none).
    public var latencies: [Int] = []
    /// Each commit's own duration, as the writer saw it.
    public var commits: [Int] = []
}

/// Commits `count` times at `rate` per second — commit `i` writes `seq` `seqBase + i` — then waits until the last
/// commit to each group has reached a handler (when `arrivals` is given).
public func pacedRun(
    rate: Int, count: Int, seqBase: Int, arrivals: Arrivals?, group: (Int) -> Int,
    write: (_ i: Int, _ seq: Int) async throws -> Void
) async throws -> PacedRun {
    var sent = [Int](repeating: 0, count: count)
    var run = PacedRun()
    run.commits.reserveCapacity(count)
    let interval = 1_000_000 / rate
    let start = nowMicroseconds()
    var lastSeqOfGroup: [Int: Int] = [:]
    for i in 0..<count {
        let wait = start + i * interval - nowMicroseconds()
        if wait > 0 { try await Task.sleep(for: .microseconds(wait)) }
        let begin = nowMicroseconds()
        sent[i] = begin
        try await write(i, seqBase + i)
        run.commits.append(nowMicroseconds() - begin)
        lastSeqOfGroup[group(i)] = seqBase + i
    }
    guard let arrivals else { return run }
    let finals = Array(lastSeqOfGroup.values)
    guard try await waitUntil({ finals.allSatisfy(arrivals.arrived) }) else {
        print("WARNING: not every group's last commit reached a handler within 30 s")
        return run
    }
    for i in 0..<count { if let at = arrivals.at(seqBase + i) { run.latencies.append(at - sent[i]) } }
    return run
}
