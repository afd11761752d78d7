import DeliveryKit
import Dispatch
import Foundation
import OwnershipKit
import ResourceKit
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

/// How long the churn runs: 20 s by default, `TETHER_STRESS_SECONDS` to change it.
let stressSeconds = Double(StressLoad.churnSeconds)

/// An observer removed explicitly (self-owned, or through its token): what it must never hear is an event after its
/// removal returned.
final class RemovalWatcher: ResourceObserver {
    let removed = LockedValue(false)
    let lateCalls: LockedValue<Int>

    init(lateCalls: LockedValue<Int>) {
        self.lateCalls = lateCalls
    }

    func resourceChanged(_ resource: Resource, event: ResourceEvent) {
        if removed.withLock({ $0 }) { lateCalls.withLock { $0 += 1 } }
    }
}

@Suite("Resource observers: owners churning on 8 threads", .loadsEveryCore, .leakChecked)
struct OwnerChurnStressTests {
    @Test(
        "Observers of every flavour and policy, owners dying at random while loads complete: no call after a deinit",
        .enabled(if: stressSeconds > 0, "TETHER_STRESS_SECONDS=0 turns the churn off (CI's ThreadSanitizer stage)"))
    func churn() async throws {
        let fixture = Fixture()
        do {
            let paths = (0..<8).map { "/churn/\($0)" }
            for path in paths { fixture.route(path, .json("[1]")) }
            fixture.service.configure { $0.expirationTime = .zero }
            let service = fixture.service
            let queues = (0..<4).map { DispatchQueue(label: "churn \($0)") }
            let tally = DeinitTally()
            let lateRemovedCalls = LockedValue(0)
            let deadline = Date().addingTimeInterval(stressSeconds)
            let workers = startStressThreads(8) { thread, pace in
                var generator = SystemRandomNumberGenerator()
                var held: [AnyObject] = []
                var tokens: [(token: ObservationToken, watcher: RemovalWatcher)] = []
                while Date() < deadline {
                    pace()
                    let resource = service.resource(paths.randomElement(using: &generator)!)
                    let policy: (any DeliveryPolicy)? =
                        switch Int.random(in: 0..<3, using: &generator) {
                        case 0: nil
                        case 1: .immediate
                        default: .deliverOn(.queue(queues.randomElement(using: &generator)!))
                        }
                    let watch = DeinitWatch(tally: tally)
                    switch Int.random(in: 0..<5, using: &generator) {
                    case 0:
                        let owner = WatchedOwner(watch)
                        resource.addObserver(WatchedObserver(watch), owner: owner, delivery: policy)
                        held.append(owner)
                    case 1:
                        let owner = WatchedOwner(watch)
                        resource.addObserver(owner: owner, delivery: policy) { _, _ in watch.recordCall() }
                        held.append(owner)
                    case 2:
                        let watcher = RemovalWatcher(lateCalls: lateRemovedCalls)
                        tokens.append((resource.observe(watcher, delivery: policy), watcher))
                    case 3:
                        let watcher = RemovalWatcher(lateCalls: lateRemovedCalls)
                        resource.addObserver(watcher, delivery: policy)
                        resource.loadIfNeeded()
                        resource.removeObservers(ownedBy: watcher)
                        watcher.removed.withLock { $0 = true }
                    default:
                        resource.overrideLocalContent(with: thread)
                    }
                    if Bool.random(using: &generator) { resource.load() }
                    // Owners and tokens die at random, often with events on their way.
                    if held.count > 16 { held.remove(at: Int.random(in: 0..<held.count, using: &generator)) }
                    if tokens.count > 8 {
                        // Cancelled (nothing may follow) or just dropped (ends at once, waiting for nothing).
                        let index = Int.random(in: 0..<tokens.count, using: &generator)
                        let (token, watcher) = tokens.remove(at: index)
                        if Bool.random(using: &generator) {
                            token.cancel()
                            watcher.removed.withLock { $0 = true }
                        }
                    }
                }
                held.removeAll()
                tokens.removeAll()
            }
            try await workers.wait(within: .seconds(stressSeconds + 300))
            for queue in queues { queue.sync {} }
            try await eventually {
                for queue in queues { queue.sync {} }
                return paths.allSatisfy { !service.resource($0).hasObservers }
            }
            #expect(tally.calls > 0, "the run delivered something")
            #expect(tally.callsAfterDeinit == 0, "calls after their owner's deinit began")
            #expect(lateRemovedCalls.withLock { $0 } == 0, "calls after removeObservers returned")
        }
        await fixture.expectNoLeaks()
    }
}
