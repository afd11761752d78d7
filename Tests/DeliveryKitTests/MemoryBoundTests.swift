import DeliveryKit
import Dispatch
import Foundation
import Testing
import TetherTesting
import TetherTestingTraits

/// The promise Tether exists for: memory stays flat however fast the producer and however slow the consumer.
/// Counted in live payload objects (deinit counters), never in time.
@Suite("Memory bound", .onDedicatedThread)
struct MemoryBoundTests {
    static let payloads = 100_000

    /// Pushes `payloads` snapshots as fast as possible; after every submit (the producer holding none), counts the
    /// snapshots alive: they can only be held by the lane and its observer.
    static func pushAndCount(
        into lane: DeliveryLane<Snapshot>, counter: LiveCounter, payloads: Int = payloads
    ) -> Int {
        var most = 0
        for value in 1...payloads {
            lane.submit(Snapshot(value, counter: counter))
            most = max(most, counter.count)
        }
        return most
    }

    @Test("Next-signal with a consumer that signals slowly: never more than 2 payloads alive")
    func nextSignalSlowConsumer() throws {
        let counter = LiveCounter()
        let processing = DispatchQueue(label: "processing")
        let seen = Log<(value: Int, superseded: Int)>()
        let lane = DeliveryLane<Snapshot>.nextSignal { delivery, signalNext in
            // The versatile pattern: the payload outlives the handler, processed elsewhere.
            let box = PayloadBox(delivery.payload)
            let superseded = delivery.supersededCount
            processing.async {
                usleep(200)
                seen.append((box.take()?.value ?? -1, superseded))  // processed and released …
                signalNext()  // … then signalled
            }
        }
        let most = Self.pushAndCount(into: lane, counter: counter)
        // The lane holds at most 2 (heldHighWater, below). A third can be alive for an instant because this
        // consumer signals from another queue, possibly before its handler has returned and let go of its payload:
        // seen once in CI under ThreadSanitizer with the machine fully loaded.
        #expect(most <= 3, "at most one in the handler, one being processed and one waiting")
        try blockUntil { seen.last?.value == Self.payloads }  // ends on the final payload
        #expect(lane.statistics.heldHighWater <= 2)
        // Every payload is accounted for exactly once, whatever the two threads' relative speed: each delivery
        // stands for itself and the payloads it superseded since the one before, and nothing else was dropped.
        // (How many deliveries there are depends on the machine; that a busy consumer gets the latest once is
        // NextSignalTests' business, checked without timing.)
        var previous = 0
        for (value, superseded) in seen.all {
            #expect(value - previous == superseded + 1, "delivery of \(value) after \(previous)")
            previous = value
        }
        let statistics = lane.statistics
        #expect(statistics.delivered == seen.count)
        #expect(statistics.delivered + statistics.coalesced == Self.payloads)
        lane.cancel()
        try blockUntil { counter.count == 0 }
    }

    @Test("Deliver-on-queue with a slow handler: never more than 2 payloads alive")
    func deliverOnQueueSlowHandler() throws {
        let counter = LiveCounter()
        let seen = Log<Int>()
        let lane = DeliveryLane<Snapshot>.deliverOn(.serialQueue()) { delivery in
            usleep(200)
            seen.append(delivery.payload.value)
        }
        let most = Self.pushAndCount(into: lane, counter: counter)
        #expect(most <= 2)
        try blockUntil { seen.last == Self.payloads }
        #expect(lane.statistics.heldHighWater <= 2)
        lane.cancel()
        try blockUntil { counter.count == 0 }
    }

    @Test("Immediate with a slow handler and a producer on another thread: never more than 2 alive")
    func immediateSlowHandler() throws {
        // Immediate runs the handler in the producer's context: whenever the lane is idle, the producer itself
        // spends the handler's time. 10,000 payloads keep that affordable.
        let payloads = 10_000
        let counter = LiveCounter()
        let seen = Log<Int>()
        let lane = DeliveryLane<Snapshot>.immediate { delivery in
            usleep(50)
            seen.append(delivery.payload.value)
        }
        // One thread delivers (it submitted first); the other keeps submitting meanwhile. The first payload is not
        // counted: its submitter may go on delivering later payloads from inside that `submit` call (immediate), and
        // keeps its own argument alive until the call returns — held by the producer, not by the lane.
        DispatchQueue.global().async { lane.submit(Snapshot(0)) }
        let most = Self.pushAndCount(into: lane, counter: counter, payloads: payloads)
        #expect(most <= 2)
        try blockUntil { seen.last == payloads }
    }
}

/// Hands a payload to other work, which takes it out (and so releases it) when done.
final class PayloadBox<Payload: Sendable>: Sendable {
    private let slot: Log<Payload>
    init(_ payload: Payload) {
        slot = Log()
        slot.append(payload)
    }
    func take() -> Payload? { slot.takeLast() }
}

extension Log {
    func takeLast() -> Element? { takeAll().last }
}
