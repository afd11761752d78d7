import DeliveryKit
import Dispatch
import Foundation
import Synchronization
import Testing
import TetherTesting
import TetherTestingTraits

/// Immediate, deliver-on-queue and async-isolated: the general form with the lane signalling on return.
@Suite("Policies")
struct PolicyTests {
    @Test("Immediate runs the handler synchronously inside submit, on the producer's thread", .onDedicatedThread)
    func immediateIsSynchronous() {
        let seen = Log<String>()
        let lane = DeliveryLane<Int>.immediate { delivery in seen.append("handler \(delivery.payload)") }
        seen.append("before")
        lane.submit(1)
        seen.append("after")
        #expect(seen.all == ["before", "handler 1", "after"])
    }

    @Test(
        "Immediate never nests: a payload submitted from inside the handler is delivered after it returns",
        .onDedicatedThread)
    func immediateNeverNests() {
        let seen = Log<String>()
        let holder = LaneHolder<Int>()
        let lane = DeliveryLane<Int>.immediate { delivery in
            seen.append("begin \(delivery.payload)")
            if delivery.payload < 3 { holder.lane?.submit(delivery.payload + 1) }
            seen.append("end \(delivery.payload)")
        }
        holder.lane = lane
        lane.submit(1)
        #expect(seen.all == ["begin 1", "end 1", "begin 2", "end 2", "begin 3", "end 3"])
    }

    @Test(
        "Immediate with a concurrent producer: never concurrently with itself, ends on the final payload",
        .onDedicatedThread)
    func immediateConcurrentProducers() {
        let busy = Flag()
        let overlaps = Log<Int>()
        let seen = Log<Int>()
        let lane = DeliveryLane<Int>.immediate { delivery in
            if busy.swap(true) { overlaps.append(delivery.payload) }
            seen.append(delivery.payload)
            usleep(50)
            busy.swap(false)
        }
        let group = DispatchGroup()
        for producer in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for value in 0..<2_000 { lane.submit(producer * 10_000 + value) }
            }
        }
        group.wait()
        lane.submit(99_999)
        #expect(overlaps.all.isEmpty)
        #expect(seen.last == 99_999)
    }

    @Test("Deliver-on-queue runs the handler on the queue and signals when it returns", .onDedicatedThread)
    func deliverOnQueue() throws {
        let queue = DispatchQueue(label: "consumer")
        let seen = Log<Int>()
        let lane = DeliveryLane<Int>.deliverOn(.queue(queue)) { delivery in
            dispatchPrecondition(condition: .onQueue(queue))
            seen.append(delivery.payload)
        }
        for value in 1...5_000 { lane.submit(value) }
        try blockUntil { seen.last == 5_000 }
        let values = seen.all
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test("An async handler isolated to an actor runs on it, one delivery at a time, latest last")
    func isolatedToAnActor() async {
        let model = ViewModel()
        let lane = DeliveryLane<Int>.isolated { delivery in
            await model.show(delivery.payload)
        }
        for value in 1...2_000 { lane.submit(value) }
        #expect(await model.waitFor(2_000))
        let shown = await model.shown
        #expect(zip(shown, shown.dropFirst()).allSatisfy { $0 < $1 })
        #expect(await model.overlaps == 0)
        #expect(lane.statistics.heldHighWater <= 2)
    }

    @Test("An async handler can be @MainActor: no hops by hand")
    @MainActor
    func mainActorHandler() async {
        let seen = MainActorLog()
        let lane = DeliveryLane<Int>.isolated { @MainActor delivery in
            MainActor.assertIsolated()
            seen.values.append(delivery.payload)
        }
        lane.submit(1)
        lane.submit(2)
        for _ in 0..<20_000 where seen.values.last != 2 { await Task.yield() }
        #expect(seen.values.last == 2)
    }
}

@MainActor
final class MainActorLog {
    var values: [Int] = []
}

actor ViewModel {
    private(set) var shown: [Int] = []
    private(set) var overlaps = 0
    private var busy = false

    func show(_ value: Int) async {
        if busy { overlaps += 1 }
        busy = true
        await Task.yield()
        shown.append(value)
        busy = false
    }

    func waitFor(_ value: Int) async -> Bool {
        for _ in 0..<200_000 {
            if shown.last == value { return true }
            await Task.yield()
        }
        return false
    }
}

/// Lets a handler reach its own lane.
final class LaneHolder<Payload: Sendable>: Sendable {
    private let box = Log<DeliveryLane<Payload>>()
    var lane: DeliveryLane<Payload>? {
        get { box.last }
        set { if let newValue { box.append(newValue) } }
    }
}

/// A boolean flag, swapped atomically.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    @discardableResult
    func swap(_ new: Bool) -> Bool { value.exchange(new, ordering: .acquiringAndReleasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
