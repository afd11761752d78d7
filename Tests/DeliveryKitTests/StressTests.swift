import DeliveryKit
import Dispatch
import Foundation
import Synchronization
import Testing
import TetherTesting
import TetherTestingTraits

/// Many producers, many lanes of every policy, signals from other threads and cancellations, at once; run under
/// `--sanitize=thread` in CI. Each producer submits 20,000 values by default; `TETHER_STRESS_OPS` overrides it.
@Suite("Concurrency stress", .loadsEveryCore, .onDedicatedThread)
struct DeliveryStressTests {
    /// Checks, per lane, that the handler never overlaps itself, that values never go back, and that at most two
    /// payloads are alive.
    final class Watch: Sendable {
        let counter = LiveCounter()
        let seen = Log<Int>()
        let violations = Log<String>()
        private let busy = Atomic<Bool>(false)
        private let last = Atomic<Int>(-1)

        func enter(_ value: Int) {
            if busy.exchange(true, ordering: .acquiringAndReleasing) { violations.append("overlap at \(value)") }
            let previous = last.exchange(value, ordering: .acquiringAndReleasing)
            if value <= previous { violations.append("\(value) after \(previous)") }
            seen.append(value)
        }

        func exit() { busy.store(false, ordering: .releasing) }
    }

    @Test("4 producers × 3 policies × 8 lanes, signals from other threads, random cancellations")
    func everythingAtOnce() throws {
        let queue = DispatchQueue(label: "signals", attributes: .concurrent)
        var lanes: [(DeliveryLane<Snapshot>, Watch, cancelled: Bool)] = []
        for index in 0..<24 {
            let watch = Watch()
            let lane: DeliveryLane<Snapshot>
            switch index % 3 {
            case 0:
                lane = .nextSignal { delivery, signalNext in
                    watch.enter(delivery.payload.value)
                    watch.exit()
                    queue.async { signalNext() }
                }
            case 1:
                lane = .deliverOn(.serialQueue()) { delivery in
                    watch.enter(delivery.payload.value)
                    watch.exit()
                }
            default:
                lane = .immediate { delivery in
                    watch.enter(delivery.payload.value)
                    watch.exit()
                }
            }
            lanes.append((lane, watch, index % 8 == 7))
        }
        let count = StressLoad.operationsPerThread(default: 20_000)  // values per producer
        let group = DispatchGroup()
        for producer in 0..<4 {
            let mine = lanes.indices.filter { $0 % 4 == producer }.map { lanes[$0] }
            DispatchQueue.global().async(group: group) {
                for value in 1...count {
                    for (lane, watch, cancelled) in mine {
                        if cancelled, value == count / 2 { lane.cancel() }
                        lane.submit(Snapshot(value, counter: watch.counter))
                    }
                }
            }
        }
        group.wait()
        for (lane, watch, cancelled) in lanes {
            #expect(watch.violations.all.isEmpty, "\(watch.violations.all.prefix(3))")
            #expect(lane.statistics.heldHighWater <= 2)
            if cancelled {
                #expect(watch.counter.count <= 1, "a cancelled lane holds nothing (at most a handler's payload)")
                #expect((watch.seen.last ?? 0) < count)
            } else {
                try blockUntil { watch.seen.last == count }  // ends on the final payload
            }
            lane.cancel()
        }
        for (_, watch, _) in lanes {
            try blockUntil { watch.counter.count == 0 }  // every payload released
        }
    }
}
