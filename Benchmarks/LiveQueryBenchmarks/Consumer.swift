import BenchmarkSupport
import TetherConcurrency

/// The slow consumer of an async sequence, the same on both sides: takes an element, notes its newest seq, lets go of
/// it, works 10 ms (without blocking a thread), then asks for the next. Letting go before the work puts freeing the
/// element in the consumer's own time on both sides alike: left to the optimizer, a `for try await` loop freed GRDB's
/// arrays before its sleep and Tether's snapshots after it, on the measured path (16–27 µs for 100 documents).
func consumeSlowly<Elements: AsyncSequence>(
    _ elements: Elements, _ consumer: Consumer, newest: (Elements.Element) -> Int
) async throws {
    var iterator = elements.makeAsyncIterator()
    while let element = try await iterator.next() {
        consumer.received { newest(element) }
        _ = consume element  // its lifetime ends here, whatever the optimizer would have chosen
        try await Task.sleep(for: .milliseconds(10))
        consumer.free()
    }
}

/// A control: a consumer that takes its first element and then holds it until the block's writes have ended, so that
/// every commit of the block is only kept for it — what the writer pays for being observed at all (the change feed,
/// the engine's `receive`, keeping what it is handed), without a delivery cycle beside it. It then consumes as
/// ``consumeSlowly(_:_:newest:)`` does.
func consumeAfterTheWrites<Elements: AsyncSequence>(
    _ elements: Elements, _ consumer: Consumer, newest: (Elements.Element) -> Int
) async throws {
    var iterator = elements.makeAsyncIterator()
    guard let first = try await iterator.next() else { return }
    consumer.received { newest(first) }
    _ = consume first
    await consumer.writesEnded()
    consumer.free()
    while let element = try await iterator.next() {
        consumer.received { newest(element) }
        _ = consume element
        try await Task.sleep(for: .milliseconds(10))
        consumer.free()
    }
}

/// A slow consumer's side of the scenario: what it received, when the newest result reached it, and when the
/// consumer was last free to take a result before that.
final class Consumer: Sendable {
    private let state = LockedValue(
        (deliveries: 0, newest: -1, handedAt: 0, at: 0, lastFree: 0, freeBeforeNewest: 0, secondRead: 0))
    /// Whether the block's writes have ended, and who waits for that.
    private let writes = LockedValue((ended: false, waiter: CheckedContinuation<Void, Never>?.none))
    /// Whether the consumer reads each result a second time at once, to time the read with the result in cache
    /// (``Figures/secondRead``).
    private let readsTwice: Bool

    init(readsTwice: Bool = false) {
        self.readsTwice = readsTwice
    }

    /// The consumer was handed a result: `read` finds its newest seq, reading every document as a consumer would.
    /// The time before the read tells the framework's hand-over from the read itself. A consumer that reads twice
    /// reads again after the moment the result counts as read.
    func received(_ read: () -> Int) {
        let handedAt = nowMicroseconds()
        let seq = read()
        let now = nowMicroseconds()
        var secondRead = 0
        if readsTwice {
            _ = read()
            secondRead = nowMicroseconds() - now
        }
        state.withLock { state in
            state.deliveries += 1
            if seq > state.newest {
                (state.newest, state.handedAt, state.at, state.freeBeforeNewest) = (seq, handedAt, now, state.lastFree)
                state.secondRead = secondRead
            }
        }
    }

    /// The consumer has finished with its result and asks for the next (it signals, or iterates again).
    func free() {
        let now = nowMicroseconds()
        state.withLock { $0.lastFree = now }
    }

    var deliveries: Int { state.withLock { $0.deliveries } }

    /// Returns once the block's writes have ended (``measure(count:seqBase:write:)``).
    func writesEnded() async {
        await withCheckedContinuation { continuation in
            let ended = writes.withLock { writes in
                if !writes.ended { writes.waiter = continuation }
                return writes.ended
            }
            if ended { continuation.resume() }
        }
    }

    struct Figures {
        var deliveries: Int
        /// From the end of the last commit to the delivery of its result, ms; -1 if it never came. Mostly the wait
        /// for the consumer to be free, anywhere in its 10 ms.
        var toFinal: Int
        /// From the moment the last commit had returned and the consumer was free, to the delivery of the final
        /// result, µs: the framework's own share of ``toFinal``, without the consumer's phase. Meaningful only when
        /// the consumer was busy as the last commit returned (``consumerWaited`` false).
        var readyToFinal: Int
        /// The part of ``readyToFinal`` before the consumer reads the result: the hand-over alone, µs.
        var readyToHanded: Int
        /// The consumer asked for its next result before the last commit had returned, and waited for it. Such a
        /// block times the commit's delivery (scenario 1's figure), from a moment after the commit — the writer's
        /// return, which the delivery can precede: ``readyToFinal`` can come out negative. No hand-over to a busy
        /// consumer to time, so the scenarios leave its `ready →` figures out and count it instead.
        var consumerWaited: Bool
        var writer: Int
        var peakResidentDelta: Int
        /// The final result's read made again at once, µs, by a consumer that reads twice (0 otherwise): the read
        /// with the result in the consumer's cache.
        var secondRead: Int
    }

    /// Writes `count` commits as fast as they go and waits for the last one's result. `samplingMemory` false: no
    /// thread samples the resident size meanwhile (its wake-ups every few milliseconds would land in a figure that
    /// measures microseconds), and the peak's delta is 0.
    func measure(
        count: Int, seqBase: Int, samplingMemory: Bool = true, write: (Int, Int) async throws -> Void
    ) async throws -> Figures {
        let before = ResidentSampler.resident()
        let sampler = samplingMemory ? ResidentSampler() : nil
        let deliveriesBefore = deliveries
        let start = nowMicroseconds()
        for i in 0..<count { try await write(i, seqBase + i) }
        let end = nowMicroseconds()
        writes.withLock { writes in
            writes.ended = true
            return writes.waiter.take()
        }?.resume()
        let last = seqBase + count - 1
        let arrived = try await waitUntil { self.state.withLock { $0.newest } >= last }
        let peak = sampler?.stop() ?? before
        let (handedAt, at, freeBefore, secondRead) = state.withLock {
            ($0.handedAt, $0.at, $0.freeBeforeNewest, $0.secondRead)
        }
        return Figures(
            deliveries: deliveries - deliveriesBefore, toFinal: arrived ? (at - end) / 1_000 : -1,
            readyToFinal: arrived ? at - max(end, freeBefore) : -1,
            readyToHanded: arrived ? handedAt - max(end, freeBefore) : -1, consumerWaited: arrived && freeBefore <= end,
            writer: (end - start) / 1_000, peakResidentDelta: max(0, peak - before) / 1_024,
            secondRead: secondRead)
    }
}
