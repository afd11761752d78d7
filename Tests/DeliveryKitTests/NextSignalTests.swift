import DeliveryKit
import Dispatch
import Testing
import TetherTesting
import TetherTestingTraits

/// The general form: next-signal.
@Suite("Next-signal", .onDedicatedThread)
struct NextSignalTests {
    @Test("Nothing is delivered while the observer has not signalled; then exactly the latest, once")
    func noDeliveryWhileUnsignalled() {
        let seen = Log<Int>()
        let signal = SignalBox()
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .inline) { delivery, signalNext in
            seen.append(delivery.payload)
            signal.keep(signalNext)
        }
        lane.submit(1)
        for value in 2...50 { lane.submit(value) }
        #expect(seen.all == [1], "no second delivery before the signal")
        signal.fire()
        #expect(seen.all == [1, 50], "one delivery: the latest")
        signal.fire()
        #expect(seen.all == [1, 50], "nothing waits: signalling delivers nothing more")
        lane.submit(51)
        #expect(seen.all == [1, 50, 51], "an idle observer gets the next payload at once")
    }

    @Test(
        "On demand: busy while unsignalled, a withdrawn payload is never delivered, idle is called when nothing waits")
    func onDemand() {
        let seen = Log<Int>()
        let signal = SignalBox()
        let idle = Log<Int>()
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .inline) { delivery, signalNext in
            seen.append(delivery.payload)
            signal.keep(signalNext)
        }
        lane.onIdle { idle.append(seen.all.count) }
        #expect(!lane.isBusy)
        lane.submit(1)
        #expect(lane.isBusy, "the observer holds 1")
        lane.submit(2)
        #expect(lane.withdrawWaiting(), "2 waited")
        #expect(!lane.withdrawWaiting(), "nothing waits now")
        signal.fire()
        #expect(seen.all == [1], "the withdrawn payload is not delivered")
        #expect(idle.all == [1], "the observer is ready and nothing waits: idle, once")
        #expect(!lane.isBusy)
        lane.submit(3)
        lane.submit(4)
        signal.fire()
        #expect(seen.all == [1, 3, 4])
        #expect(idle.all == [1], "a signal that begins the waiting payload is not idle")
        signal.fire()
        #expect(idle.all == [1, 3])
        lane.cancel()
        #expect(lane.statistics.coalesced == 1, "the withdrawn payload counts as coalesced")
    }

    @Test(
        "Checked at the signal: a waiting payload the producer calls out of date is withdrawn and idle is called; a current one is delivered with no idle call"
    )
    func checkWaitingAtSignal() {
        let seen = Log<Int>()
        let signal = SignalBox()
        let idle = Log<Int>()
        let checked = Log<Int>()
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .inline) { delivery, signalNext in
            seen.append(delivery.payload)
            signal.keep(signalNext)
        }
        lane.onIdle { idle.append(seen.all.count) }
        // Even payloads are current, odd ones out of date.
        lane.checkWaitingAtSignal { payload in
            checked.append(payload)
            return payload % 2 == 0
        }
        lane.submit(1)
        #expect(checked.all.isEmpty, "an idle observer takes a payload at once: nothing to check")
        lane.submit(2)
        signal.fire()
        #expect(seen.all == [1, 2] && checked.all == [2], "current: delivered at the signal")
        #expect(idle.all.isEmpty, "and the producer is not called")
        lane.submit(5)
        lane.submit(3)
        signal.fire()
        #expect(checked.all == [2, 3], "only the latest is checked: 5 was coalesced into it")
        #expect(seen.all == [1, 2], "out of date: withdrawn, not delivered")
        #expect(idle.all == [2], "the observer is idle, and the producer is told, to submit the latest")
        #expect(!lane.isBusy && lane.held.waiting == nil)
        lane.submit(7)
        #expect(seen.all == [1, 2, 7], "an idle observer's payload is not checked")
        lane.cancel()
        #expect(lane.statistics.coalesced == 2, "5 superseded by 3, and 3 withdrawn")
    }

    @Test("A coalesced delivery says how many payloads it replaced")
    func supersededCount() {
        let seen = Log<Delivery<Int>>()
        let signal = SignalBox()
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .inline) { delivery, signalNext in
            seen.append(delivery)
            signal.keep(signalNext)
        }
        for value in 1...10 { lane.submit(value) }
        signal.fire()
        #expect(seen.all.map(\.payload) == [1, 10])
        #expect(seen.all.map(\.supersededCount) == [0, 8], "2…10 were submitted; 10 stands for 9 payloads")
        #expect(lane.statistics.coalesced == 8)
        #expect(lane.statistics.submitted == 10)
    }

    @Test("Calling signalNext twice is harmless: it cannot release a later delivery early")
    func doubleSignal() {
        let seen = Log<Int>()
        let signals = Log<SignalNext>()
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .inline) { delivery, signalNext in
            seen.append(delivery.payload)
            signals.append(signalNext)
        }
        lane.submit(1)
        lane.submit(2)
        signals.all[0]()  // delivers 2
        lane.submit(3)
        signals.all[0]()  // a stale second call for delivery 1: must not release delivery 2
        #expect(seen.all == [1, 2])
        signals.all[1]()
        #expect(seen.all == [1, 2, 3])
    }

    @Test("Skip-if-unchanged: a payload equal to the last one delivered is not delivered")
    func skipIfUnchanged() {
        let seen = Log<Int>()
        let signal = SignalBox()
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .inline, skipIf: ==) { delivery, signalNext in
            seen.append(delivery.payload)
            signal.keep(signalNext)
        }
        lane.submit(1)
        lane.submit(2)
        lane.submit(1)  // back to what the observer already has
        signal.fire()
        #expect(seen.all == [1], "the latest equals the last delivered: nothing to deliver")
        #expect(lane.statistics.skippedUnchanged == 1)
        lane.submit(1)
        #expect(seen.all == [1])
        lane.submit(3)
        #expect(seen.all == [1, 3])
    }

    @Test("Without an equality, every change is delivered, even back to an earlier value")
    func alwaysDeliver() {
        let seen = Log<Int>()
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .inline) { delivery, signalNext in
            seen.append(delivery.payload)
            signalNext()
        }
        for value in [1, 1, 2, 1] { lane.submit(value) }
        #expect(seen.all == [1, 1, 2, 1])
    }

    @Test("Merge coalescing folds waiting payloads together, relative to the last delivery")
    func mergeCoalescing() {
        let seen = Log<[Int]>()
        let signal = SignalBox()
        let lane = DeliveryLane<[Int]>.nextSignal(deliverOn: .inline, coalescing: .merge { $0 + $1 }) {
            delivery, signalNext in
            seen.append(delivery.payload)
            signal.keep(signalNext)
        }
        lane.submit([1])
        lane.submit([2])
        lane.submit([3])
        lane.submit([4])
        signal.fire()
        #expect(seen.all == [[1], [2, 3, 4]], "the changes since the last delivery, none lost")
    }

    @Test("signalNext may come later, from any thread; the next delivery runs on the lane's executor")
    func signalFromAnotherThread() throws {
        let queue = DispatchQueue(label: "observer")
        let seen = Log<Int>()
        let signal = SignalBox()
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .queue(queue)) { delivery, signalNext in
            dispatchPrecondition(condition: .onQueue(queue))
            seen.append(delivery.payload)
            signal.keep(signalNext)
        }
        lane.submit(1)
        try blockUntil { signal.isHolding }
        lane.submit(2)
        lane.submit(3)
        DispatchQueue.global().async { signal.fire() }
        try blockUntil { seen.all == [1, 3] }
    }

    @Test("Not signalling pauses that observer alone: the producer and other observers go on")
    func pauseIsLocal() {
        let stuck = Log<Int>()
        let free = Log<Int>()
        let stuckLane = DeliveryLane<Int>.nextSignal(deliverOn: .inline) { delivery, _ in stuck.append(delivery.payload)
        }
        let freeLane = DeliveryLane<Int>.nextSignal(deliverOn: .inline) { delivery, signalNext in
            free.append(delivery.payload)
            signalNext()
        }
        for value in 1...1000 {
            stuckLane.submit(value)
            freeLane.submit(value)
        }
        #expect(stuck.all == [1])
        #expect(free.all == Array(1...1000))
        #expect(stuckLane.statistics.heldHighWater <= 2)
    }

    @Test("Per-observer order: deliveries never go back in time, and the last is the final payload")
    func orderAndLatestValue() throws {
        let seen = Log<Int>()
        let lane = DeliveryLane<Int>.nextSignal { delivery, signalNext in
            seen.append(delivery.payload)
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(50)) { signalNext() }
        }
        for value in 1...20_000 { lane.submit(value) }
        try blockUntil { seen.last == 20_000 }  // ends on the final payload
        let values = seen.all
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "strictly increasing")
        #expect(values.count < 20_000, "a slow observer sees coalesced deliveries, not a backlog")
    }
}
