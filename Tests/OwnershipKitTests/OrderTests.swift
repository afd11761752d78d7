import Foundation
import OwnershipKit
import Synchronization
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits

/// Rule 7: insertion order, removal during a notification, additions during a notification.
@Suite("Order: rule 7", .onDedicatedThread)
struct OrderTests {
    @Test("Delivery follows insertion order, across all three flavours")
    func insertionOrder() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let log = Log<String>()
            let selfOwned = (0..<3).map { index in
                tracker.track(Recorder("self \(index)") { if case .event = $0 { log.append("self \(index)") } })
            }
            withExtendedLifetime(owner) {
                for index in 0..<3 {
                    table.add(selfOwned[index], as: { $0 })
                    table.add(
                        tracker.track(
                            Recorder("glue \(index)") { if case .event = $0 { log.append("glue \(index)") } }),
                        owner: owner)
                    table.add(ClosureListener { if case .event = $0 { log.append("closure \(index)") } }, owner: owner)
                }
                table.notify(1)
                table.removeObservers(ownedBy: owner)
            }
            #expect(log.all == (0..<3).flatMap { ["self \($0)", "glue \($0)", "closure \($0)"] })
        }
    }

    @Test("An observer removed by an earlier observer's callback misses the notification in progress")
    func removalDuringNotificationSameThread() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let first = tracker.track(Owner("first"))
            let third = tracker.track(Owner("third"))
            withExtendedLifetime((first, third)) {
                let remover = tracker.track(
                    Recorder("remover") { notice in
                        if case .event = notice { table.removeObservers(ownedBy: third) }
                    })
                let middle = tracker.track(Recorder("middle"))
                let victim = tracker.track(Recorder("victim"))
                table.add(remover, owner: first)
                table.add(middle, owner: first)
                table.add(victim, owner: third)
                table.notify(1)
                #expect(middle.events == [1])
                #expect(victim.notices == [.added, .stopped])
                table.removeObservers(ownedBy: first)
            }
        }
    }

    @Test("Once removal returns on another thread, a notification in progress delivers nothing more to it")
    func removalDuringNotificationOtherThread() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let victimOwner = tracker.track(Owner("victim owner"))
            let started = Flag()
            let removing = Flag()
            let removed = Flag()
            let violations = Log<String>()
            let victimID = LockedValue<ObserverID?>(nil)
            let slow = tracker.track(
                Recorder("slow") { notice in
                    guard case .event = notice else { return }
                    started.set()
                    // Held until the removal has ended the victim's entry: the remover then waits for this
                    // notification, which is still in progress and must skip the victim.
                    try? blockUntil {
                        removing.isSet && victimID.withLock { $0 }.map { !table.isObserving($0) } == true
                    }
                })
            let victim = tracker.track(
                Recorder("victim") { notice in
                    if removed.isSet { violations.append("received \(notice) after removal returned") }
                })
            table.add(slow, owner: owner)
            let id = table.add(victim, owner: victimOwner)
            victimID.withLock { $0 = id }

            let notifier = Thread { table.notify(1) }
            notifier.start()
            try? blockUntil { started.isSet }
            removing.set()
            withExtendedLifetime(victimOwner) { table.removeObservers(ownedBy: victimOwner) }
            removed.set()
            #expect(victim.notices == [.added, .stopped], "stopped was delivered before removal returned")
            try? blockUntil { notifier.isFinished }
            #expect(violations.all.isEmpty)
            #expect(victim.events.isEmpty, "the notification in progress skipped the removed observer")
            withExtendedLifetime(owner) { table.removeObservers(ownedBy: owner) }
        }
    }

    @Test("An observer added during a notification gets its added notice, not that notification")
    func additionDuringNotification() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let late = tracker.track(Recorder("late"))
            withExtendedLifetime(owner) {
                let adder = tracker.track(
                    Recorder("adder") { notice in
                        if case .event(1) = notice { table.add(late, owner: owner) }
                    })
                table.add(adder, owner: owner)
                table.notify(1)
                table.notify(2)
                #expect(late.notices == [.added, .event(2)])
                #expect(adder.events == [1, 2])
                table.removeObservers(ownedBy: owner)
            }
        }
    }
}

/// A flag set once, read from any thread.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
