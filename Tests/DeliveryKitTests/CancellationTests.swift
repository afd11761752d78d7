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
        let queue = DispatchQueue(label: "blocked")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let counter = LiveCounter()
        let seen = Log<Int>()
        let lane = DeliveryLane<Snapshot>.deliverOn(.queue(queue)) { seen.append($0.payload.value) }
        lane.submit(Snapshot(1, counter: counter))
        lane.cancel()
        #expect(counter.count == 0, "released by cancel() though its hand-over was already queued")
        gate.signal()
        queue.sync {}
        #expect(seen.all.isEmpty)
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
