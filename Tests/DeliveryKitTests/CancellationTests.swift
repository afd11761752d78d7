import DeliveryKit
import Dispatch
import Testing
import TetherTestingTraits

@Suite("Cancellation", .onDedicatedThread)
struct CancellationTests {
    @Test("Cancelling releases the waiting payload at once, and nothing more is delivered")
    func cancelReleasesWaitingPayload() {
        let counter = LiveCounter()
        let seen = Log<Int>()
        let signal = SignalBox()
        let lane = DeliveryLane<Snapshot>.nextSignal(deliverOn: .inline) { delivery, signalNext in
            seen.append(delivery.payload.value)
            signal.keep(signalNext)
        }
        lane.submit(Snapshot(1, counter: counter))
        lane.submit(Snapshot(2, counter: counter))
        #expect(counter.count == 1, "only the waiting one is held: the observer let go of #1")
        lane.cancel()
        #expect(counter.count == 0, "the waiting payload was released by cancel(), not later")
        signal.fire()
        lane.submit(Snapshot(3, counter: counter))
        #expect(seen.all == [1])
        #expect(counter.count == 0, "a payload submitted after cancellation is dropped at once")
        #expect(lane.statistics.droppedByCancellation == 2)
        #expect(lane.isCancelled)
    }

    @Test("Cancelling releases the payload kept for skip-if-unchanged")
    func cancelReleasesLastDelivered() {
        let counter = LiveCounter()
        let lane = DeliveryLane<Snapshot>.immediate(skipIf: { $0.value == $1.value }) { _ in }
        lane.submit(Snapshot(1, counter: counter))
        #expect(counter.count == 1, "kept to compare with")
        lane.cancel()
        #expect(counter.count == 0)
    }

    @Test("A delivery queued on an executor but not yet begun does not start after cancellation")
    func queuedDeliveryDoesNotStart() {
        let blocked = BlockedQueue()
        let counter = LiveCounter()
        let seen = Log<Int>()
        let lane = DeliveryLane<Snapshot>.deliverOn(.queue(blocked.queue)) { seen.append($0.payload.value) }
        lane.submit(Snapshot(1, counter: counter))
        lane.cancel()
        #expect(counter.count == 0, "released by cancel() though its hand-over was already queued")
        blocked.release()
        #expect(seen.all.isEmpty)
    }

    @Test("Cancelling releases all three a lane can hold at once: waiting, handed to the executor, kept to compare")
    func cancelReleasesEveryPayloadHeld() {
        let blocked = BlockedQueue()
        let counter = LiveCounter()
        let lane = DeliveryLane<Snapshot>.deliverOn(.queue(blocked.queue), skipIf: { $0.value == $1.value }) { _ in }
        lane.submit(Snapshot(1, counter: counter))  // begun: queued for the executor, and kept to compare with
        lane.submit(Snapshot(2, counter: counter))  // waits for the first to be handled
        #expect(counter.count == 2)
        lane.cancel()
        #expect(counter.count == 0, "each released by cancel(), not when the queue runs")
        blocked.release()
        #expect(lane.statistics.droppedByCancellation == 2)
    }

    @Test("A signal kept after its lane is gone keeps nothing alive and does nothing")
    func signalOutlivesLane() {
        let counter = LiveCounter()
        let kept = SignalBox()
        weak var weakLane: DeliveryLane<Snapshot>?
        do {
            let lane = DeliveryLane<Snapshot>.nextSignal(deliverOn: .inline) { _, signalNext in kept.keep(signalNext) }
            weakLane = lane
            lane.submit(Snapshot(1, counter: counter))
            lane.submit(Snapshot(2, counter: counter))
        }
        #expect(kept.isHolding, "the handler ran and kept its signal")
        #expect(weakLane == nil, "the signal does not keep its lane alive")
        #expect(counter.count == 0)
        kept.fire()
    }

    @Test("A lane nobody references is gone, with its payloads")
    func laneDeallocates() {
        let counter = LiveCounter()
        weak var weakLane: DeliveryLane<Snapshot>?
        do {
            let lane = DeliveryLane<Snapshot>.nextSignal(deliverOn: .inline) { _, _ in }
            weakLane = lane
            lane.submit(Snapshot(1, counter: counter))
            lane.submit(Snapshot(2, counter: counter))
        }
        #expect(weakLane == nil)
        #expect(counter.count == 0)
    }
}
