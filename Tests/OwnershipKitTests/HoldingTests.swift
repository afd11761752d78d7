import OwnershipKit
import Testing
import TetherTesting
import TetherTestingTraits

/// Rules 1–3: owners decide how an observer is held and how long it observes.
@Suite("Holding: rules 1–3", .onDedicatedThread)
struct HoldingTests {
    @Test("An externally owned observer is held strongly until its owner is gone")
    func externalOwnerHoldsStrongly() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let probe = LeakTracker()
            table.add(probe.track(tracker.track(Recorder("glue"))), owner: owner)
            #expect(probe.survivors == ["RecordingObserver<Int>"], "the table holds the observer strongly")
            withExtendedLifetime(owner) {
                table.notify(1)
                #expect(table.observerCount == 1)
            }
        }
    }

    @Test("A self-owned observer is held weakly and observes until it is deallocated")
    func selfOwnedHeldWeakly() {
        expectNoLeaks { tracker in
            let table = makeTable()
            var observer: Recorder? = tracker.track(Recorder("self"))
            table.add(observer!, as: { $0 })
            table.notify(1)
            #expect(observer?.events == [1])
            #expect(observer?.stoppedCount == 0)
            observer = nil
            #expect(tracker.survivors.isEmpty, "held weakly: nothing else keeps it alive")
            #expect(table.observerCount == 0)
            table.notify(2)
            table.sweep()
        }
    }

    @Test("Adding with the observer itself as owner is self-ownership")
    func ownerIsObserverMeansSelfOwned() {
        expectNoLeaks { tracker in
            let table = makeTable()
            var observer: Recorder? = tracker.track(Recorder())
            table.add(observer!, owner: observer!)
            table.notify(7)
            #expect(observer?.events == [7])
            observer = nil
            #expect(tracker.survivors.isEmpty)
        }
    }

    @Test("Several owners removed one at a time: the observer stops with the last")
    func multipleOwnersRemovedOneAtATime() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let a = tracker.track(Owner("a"))
            let c = tracker.track(Owner("c"))
            var b: Owner? = tracker.track(Owner("b"), "b")
            let observer = tracker.track(Recorder())
            table.add(observer, owner: a)
            table.add(observer, owner: b!)
            table.add(observer, owner: c)
            table.notify(1)
            table.removeObservers(ownedBy: a)
            table.notify(2)
            b = nil  // deallocated; c still owns the observer
            #expect(tracker.survivors.contains("b") == false)
            withExtendedLifetime(c) {
                table.notify(3)
                #expect(observer.stoppedCount == 0)
                table.removeObservers(ownedBy: c)
            }
            table.notify(4)
            #expect(observer.notices == [.added, .event(1), .event(2), .event(3), .stopped])
            #expect(table.observerCount == 0)
            withExtendedLifetime(a) {}
        }
    }

    @Test("Removing self-ownership leaves the other owners in charge, holding strongly")
    func selfRemovalRemovesOnlySelfOwnership() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let probe = LeakTracker()
            do {
                let observer = probe.track(tracker.track(Recorder()))
                table.add(observer, as: { $0 })
                table.add(observer, owner: owner)
                table.removeObservers(ownedBy: observer)
                #expect(observer.stoppedCount == 0)
            }
            #expect(probe.survivors.count == 1, "the other owner keeps it, strongly")
            table.notify(1)
            withExtendedLifetime(owner) {
                table.removeObservers(ownedBy: owner)
            }
            #expect(probe.survivors.isEmpty, "released once its last owner was removed")
        }
    }

    @Test("Owned and self-owned: losing the other owner makes it weak; re-adding the owner makes it strong again")
    func ownedAndSelfOwnedTransitions() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let probe = LeakTracker()
            var observer: Recorder? = probe.track(tracker.track(Recorder()))
            table.add(observer!, as: { $0 })
            table.add(observer!, owner: owner)
            withExtendedLifetime(owner) {
                table.removeObservers(ownedBy: owner)
            }
            #expect(observer?.stoppedCount == 0, "still self-owned, still observing")
            table.notify(1)
            #expect(observer?.events == [1])

            table.add(observer!, owner: owner)
            observer = nil
            #expect(probe.survivors.count == 1, "strong again while the owner lives")
            withExtendedLifetime(owner) {
                table.notify(2)
                table.removeObservers(ownedBy: owner)
            }
            #expect(probe.survivors.isEmpty, "weak again, and nothing else holds it")
            #expect(table.observerCount == 0)
        }
    }

    @Test("An owner's death while self-owned makes the observer weak, not stopped")
    func ownerDeathWhileSelfOwned() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let observer = tracker.track(Recorder())
            do {
                let owner = tracker.track(Owner())
                table.add(observer, as: { $0 })
                table.add(observer, owner: owner)
            }
            table.sweep()
            table.notify(1)
            #expect(observer.notices == [.added, .event(1)])
        }
    }
}
