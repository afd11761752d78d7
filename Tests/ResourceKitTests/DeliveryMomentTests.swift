import DeliveryKit
import Dispatch
import Foundation
import OwnershipKit
import ResourceKit
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits

/// How an observer is attached, for the matrix.
enum Flavour: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case owned, closure, token
    var testDescription: String { rawValue }
}

/// How events reach it, for the matrix.
enum Path: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case direct, immediate, deliverOn
    var testDescription: String { rawValue }

    func policy(_ queue: DispatchQueue) -> (any DeliveryPolicy)? {
        switch self {
        case .direct: nil
        case .immediate: .immediate
        case .deliverOn: .deliverOn(.queue(queue))
        }
    }
}

/// An observer that records its calls against its owner's lifetime, and may hold its first `newData` call.
final class WatchedObserver: ResourceObserver {
    let watch: DeinitWatch
    let stops = LockedValue(0)
    let hold: (entered: DispatchSemaphore, proceed: DispatchSemaphore)?

    init(_ watch: DeinitWatch, holdingFirstNewData: Bool = false) {
        self.watch = watch
        hold = holdingFirstNewData ? (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)) : nil
    }

    func resourceChanged(_ resource: Resource, event: ResourceEvent) {
        watch.recordCall()
        if case .newData = event, let hold, resource.latestData?.content as? Int == 1 {
            hold.entered.signal()
            hold.proceed.wait()
        }
    }

    func stoppedObserving(resource: Resource) {
        stops.withLock { $0 += 1 }
    }

    /// Attaches it to `resource` as `flavour` owned by `owner` (for `.token`, the owner holds the token).
    func attach(to resource: Resource, as flavour: Flavour, owner: TokenHolder, policy: (any DeliveryPolicy)?) {
        switch flavour {
        case .owned:
            resource.addObserver(self, owner: owner, delivery: policy)
        case .closure:
            resource.addObserver(owner: owner, delivery: policy) { [self] resource, event in
                resourceChanged(resource, event: event)
            }
        // A closure observer has no stoppedObserving: count the observer's end through the owner's token.
        case .token:
            owner.token.withLock { $0 = resource.observe(self, delivery: policy) }
        }
    }
}

/// An owner that can hold a token (the token flavour: the token lives exactly as long as its holder). Its watch
/// notes the deinit after the token is gone, so a call the token still allowed is never counted as late.
final class TokenHolder: Sendable {
    let owner: WatchedOwner
    let token = LockedValue<ObservationToken?>(nil)
    init(_ watch: DeinitWatch) { owner = WatchedOwner(watch) }
    deinit { token.withLock { $0 = nil } }
}

/// The matrix: {owned, closure, token} × {direct, immediate, deliver-on-queue} × {the owner dies while the event
/// waits, while the handler runs}: no call once the owner's deinit has begun, and the observation ends.
@Suite("Resource observers: ownership holds at the moment of delivery", .leakChecked, .onDedicatedThread)
struct ResourceDeliveryMomentTests {
    @Test(
        "The owner dies while an event waits on the queue: the event is dropped, stoppedObserving once",
        arguments: Flavour.allCases)
    func ownerDiesWhileEventWaits(flavour: Flavour) throws {
        let fixture = Fixture()
        let resource = fixture.service.resource("/items")
        let queue = DispatchQueue(label: "suspended")
        queue.suspend()
        let watch = DeinitWatch()
        let observer = WatchedObserver(watch)
        do {
            let owner = TokenHolder(watch)
            observer.attach(to: resource, as: flavour, owner: owner, policy: Path.deliverOn.policy(queue))
            resource.overrideLocalContent(with: 1)  // handed to the lane while the owner lives
        }
        #expect(watch.hasDied)
        queue.resume()
        // A positive barrier: the observation's end is reported after the dropped event would have run.
        try blockUntil {
            queue.sync {}
            return flavour == .closure ? !resource.hasObservers : observer.stops.withLock { $0 } == 1
        }
        queue.sync {}
        #expect(watch.calls == 0)
        #expect(watch.callsAfterDeinit == 0)
        if flavour != .closure { #expect(observer.stops.withLock { $0 } == 1) }
        #expect(!resource.hasObservers)
    }

    @Test(
        "The owner dies while the handler runs: it is kept alive for that call, and no call begins after its deinit",
        arguments: Flavour.allCases, Path.allCases)
    func ownerDiesWhileHandlerRuns(flavour: Flavour, path: Path) throws {
        let fixture = Fixture()
        let resource = fixture.service.resource("/items")
        let queue = DispatchQueue(label: "handler")
        let watch = DeinitWatch()
        let observer = WatchedObserver(watch, holdingFirstNewData: true)
        let ownerAliveDuringCall = LockedValue<Bool?>(nil)
        do {
            let owner = TokenHolder(watch)
            observer.attach(to: resource, as: flavour, owner: owner, policy: path.policy(queue))
            Thread { resource.overrideLocalContent(with: 1) }.start()
            observer.hold!.entered.wait()
        }  // the test lets go of the owner while the handler runs
        ownerAliveDuringCall.withLock { $0 = !watch.hasDied }
        if flavour == .token {
            // Nothing keeps a token alive, not even the call in progress: the observation ends with its holder.
            #expect(!resource.hasObservers, "the token outlived its holder")
        }
        observer.hold!.proceed.signal()
        try blockUntil { watch.hasDied }
        resource.overrideLocalContent(with: 2)
        try blockUntil {
            queue.sync {}
            return !resource.hasObservers && (flavour == .closure || observer.stops.withLock { $0 } == 1)
        }
        queue.sync {}
        if flavour != .token {
            // A token's holder is not an owner: the call keeps the observation's owner alive, never the token.
            #expect(ownerAliveDuringCall.withLock { $0 } == true, "the call kept its owner alive")
        }
        #expect(watch.callsAfterDeinit == 0)
        if flavour != .closure { #expect(observer.stops.withLock { $0 } == 1) }
    }

    @Test("A self-owned observer removed while its observerAdded waits on the queue hears nothing, then stops once")
    func selfOwnedRemovedWhileAddedWaits() throws {
        let fixture = Fixture()
        let resource = fixture.service.resource("/items")
        let queue = DispatchQueue(label: "suspended")
        queue.suspend()
        let observer = PolicyObserver(seen: LockedValue([]), stops: LockedValue(0))
        resource.addObserver(observer, delivery: .deliverOn(.queue(queue)))
        resource.removeObservers(ownedBy: observer)  // returns with observerAdded still waiting
        queue.resume()
        try blockUntil {
            queue.sync {}
            return observer.stops.withLock { $0 } == 1
        }
        #expect(observer.seen.withLock { $0 }.isEmpty, "nothing after removeObservers returned")
    }

    @Test("Cancelling a token while its event waits on the queue: nothing is delivered after cancel() returns")
    func tokenCancelledWhileEventWaits() throws {
        let fixture = Fixture()
        let resource = fixture.service.resource("/items")
        let queue = DispatchQueue(label: "suspended")
        queue.suspend()
        let observer = PolicyObserver(seen: LockedValue([]), stops: LockedValue(0))
        let token = resource.observe(observer, delivery: .deliverOn(.queue(queue)))
        resource.overrideLocalContent(with: 1)
        token.cancel()
        queue.resume()
        try blockUntil {
            queue.sync {}
            return observer.stops.withLock { $0 } == 1
        }
        #expect(observer.seen.withLock { $0 }.isEmpty)
    }
}
