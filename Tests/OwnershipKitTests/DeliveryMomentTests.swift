import DeliveryKit
import Dispatch
import Foundation
import OwnershipKit
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits

/// A payload whose deinit a `LeakTracker` sees: a dropped delivery must be released at once.
final class Parcel: Sendable {
    let number: Int
    init(_ number: Int) { self.number = number }
}

/// An observer that hands events to a lane, as ResourceKit's and LiveQueryKit's do; it counts its stopped notices.
struct LaneListener: Sendable {
    let lane: DeliveryLane<Parcel>
    let parcels: LeakTracker
    let stopped: Log<Int>

    func hear(_ notice: ObserverNotice<Int>) {
        switch notice {
        case .added: break
        case .event(let number): lane.submit(parcels.track(Parcel(number)))
        case .stopped:
            stopped.append(1)
            lane.cancel()
        }
    }
}

typealias LaneTable = ObserverTable<LaneListener, Int>

/// A table with one lane observer on `executor`, whose handler asks the table at the moment of the call.
struct LaneFixture {
    let table = LaneTable { listener, notice in listener.hear(notice) }
    let binding = ObserverBinding()
    let parcels = LeakTracker()
    let stopped = Log<Int>()
    let lane: DeliveryLane<Parcel>

    init(on executor: any DeliveryExecutor, handler: @escaping @Sendable (Parcel) -> Void) {
        let table = self.table
        let binding = self.binding
        lane = .deliverOn(executor) { [weak table] delivery in
            guard let table, let id = binding.id else { return }
            table.withLiveObserver(id) { handler(delivery.payload) }
        }
    }

    func add(owner: AnyObject) {
        let listener = LaneListener(lane: lane, parcels: parcels, stopped: stopped)
        table.add(listener, identity: nil, owner: owner, binding: binding)
    }

    var id: ObserverID { binding.id! }
}

/// Ownership holds at the moment of delivery: a delivery that waited is checked when its handler would run.
@Suite("Delivery moment: ownership checked where the handler runs", .onDedicatedThread)
struct DeliveryMomentTests {
    /// A lane observer whose call signals `entered`, waits for `proceed`, then logs "call returned".
    static func callHeldOpen() -> (LaneFixture, entered: DispatchSemaphore, proceed: DispatchSemaphore, Log<String>) {
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let log = Log<String>()
        let fixture = LaneFixture(on: .queue(DispatchQueue(label: "handler"))) { _ in
            entered.signal()
            proceed.wait()
            log.append("call returned")
        }
        return (fixture, entered, proceed, log)
    }

    @Test("A payload waiting when its owner dies is dropped and released, and the observer ends once")
    func ownerDiesWhilePayloadWaits() {
        let queue = DispatchQueue(label: "suspended")
        queue.suspend()
        let watch = DeinitWatch()
        let fixture = LaneFixture(on: .queue(queue)) { _ in watch.recordCall() }
        do {
            let owner = WatchedOwner(watch)
            fixture.add(owner: owner)
            fixture.table.notify(1)  // handed to the lane while the owner lives; waits on the suspended queue
        }
        #expect(watch.hasDied)
        queue.resume()
        queue.sync {}  // the waiting hand-over has run (and been refused)
        #expect(watch.calls == 0)
        #expect(watch.callsAfterDeinit == 0)
        #expect(fixture.stopped.all.count == 1, "the observation ended, with one stopped notice")
        #expect(fixture.parcels.survivors.isEmpty, "the dropped payload was released at once")
        #expect(!fixture.table.hasObservers)
    }

    @Test("The owner is kept alive through a call; after its deinit no call begins")
    func ownerDiesWhileHandlerRuns() {
        let queue = DispatchQueue(label: "handler")
        let watch = DeinitWatch()
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let ownerAliveDuringCall = LockedValue<Bool?>(nil)
        let fixture = LaneFixture(on: .queue(queue)) { parcel in
            watch.recordCall()
            guard parcel.number == 1 else { return }
            entered.signal()
            proceed.wait()
            ownerAliveDuringCall.withLock { $0 = !watch.hasDied }
        }
        do {
            let owner = WatchedOwner(watch)
            fixture.add(owner: owner)
            fixture.table.notify(1)
            entered.wait()
        }  // the test lets go of the owner while the handler runs
        proceed.signal()
        queue.sync {}
        #expect(ownerAliveDuringCall.withLock { $0 } == true, "the call kept its owner alive")
        #expect(watch.hasDied, "the owner's deinit ran once the call returned")
        // No sweep, no notification: the call that kept the owner alive ended the observer as it returned.
        #expect(fixture.stopped.all.count == 1, "the observation ended as the call returned")
        fixture.table.notify(2)
        queue.sync {}
        #expect(watch.calls == 1)
        #expect(watch.callsAfterDeinit == 0)
        #expect(fixture.stopped.all.count == 1)
        #expect(fixture.parcels.survivors.isEmpty)
    }

    @Test(
        "remove(_:) waits for a call running on another thread, on a condition; from inside a call it returns at once")
    func removalWaitsForRunningCall() throws {
        let (fixture, entered, proceed, log) = Self.callHeldOpen()
        let owner = Owner()
        fixture.add(owner: owner)
        fixture.table.notify(1)
        entered.wait()
        let removed = DispatchSemaphore(value: 0)
        let id = fixture.id
        Thread {
            log.append("removing")
            fixture.table.remove(id)
            log.append("removed")
            removed.signal()
        }.start()
        // A positive barrier: the removal has ended the entry (it is waiting for the call) before the call may go on.
        try blockUntil { !fixture.table.isObserving(id) }
        proceed.signal()
        removed.wait()
        #expect(log.all == ["removing", "call returned", "removed"])
        #expect(fixture.stopped.all.count == 1)
        withExtendedLifetime(owner) {}
    }

    @Test("An observer that removes itself from inside its call is not waited for")
    func removalFromInsideTheCall() {
        let queue = DispatchQueue(label: "handler")
        let binding = LockedValue<ObserverID?>(nil)
        let table = LockedValue<LaneTable?>(nil)
        let fixture = LaneFixture(on: .queue(queue)) { _ in
            if let id = binding.withLock({ $0 }) { table.withLock { $0 }?.remove(id) }
        }
        table.withLock { $0 = fixture.table }
        let owner = Owner()
        fixture.add(owner: owner)
        binding.withLock { $0 = fixture.id }
        fixture.table.notify(1)
        queue.sync {}  // would never return if the call waited for itself
        #expect(fixture.stopped.all.count == 1)
        #expect(!fixture.table.hasObservers)
        table.withLock { $0 = nil }
        withExtendedLifetime(owner) {}
    }

    @Test("await remove(_:) suspends until a call running elsewhere returns")
    func asyncRemovalSuspends() async throws {
        let (fixture, entered, proceed, log) = Self.callHeldOpen()
        let owner = Owner()
        fixture.add(owner: owner)
        fixture.table.notify(1)
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                entered.wait()
                continuation.resume()
            }
        }
        let id = fixture.id
        let removal = Task {
            await fixture.table.remove(id)
            log.append("removed")
        }
        try await eventually { !fixture.table.isObserving(id) }
        proceed.signal()
        await removal.value
        #expect(log.all == ["call returned", "removed"])
        withExtendedLifetime(owner) {}
    }

    @Test("An asynchronous handler: a payload waiting behind a running call is dropped once the owner has died")
    func asyncHandlerOwnerDies() async throws {
        let watch = DeinitWatch()
        let table = LaneTable { listener, notice in listener.hear(notice) }
        let binding = ObserverBinding()
        let parcels = LeakTracker()
        let stopped = Log<Int>()
        let firstCall = AsyncGate()
        let lane = DeliveryLane<Parcel>.isolated { [weak table] delivery in
            guard let table, let id = binding.id else { return }
            await table.withLiveObserver(id) {
                watch.recordCall()
                if delivery.payload.number == 1 { await firstCall.pass() }
            }
        }
        do {
            let owner = WatchedOwner(watch)
            let listener = LaneListener(lane: lane, parcels: parcels, stopped: stopped)
            table.add(listener, identity: nil, owner: owner, binding: binding)
            table.notify(1)
            try await eventually { firstCall.isReached }
            table.notify(2)  // waits in the lane behind the running call
        }  // the test lets go of the owner; the running call keeps it alive until it returns
        #expect(!watch.hasDied)
        firstCall.open()
        try await eventually { stopped.all.count == 1 }
        #expect(watch.hasDied)
        #expect(watch.calls == 1)
        #expect(watch.callsAfterDeinit == 0)
        try await eventually { parcels.survivors.isEmpty }
    }
}
