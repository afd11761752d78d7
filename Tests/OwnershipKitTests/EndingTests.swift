import OwnershipKit
import Testing
import TetherTesting
import TetherTestingTraits

/// Rules 5 and 6: how entries end, and the stopped notice.
@Suite("Ending: rules 5–6", .onDedicatedThread)
struct EndingTests {
    @Test("An owner deallocated: no further delivery, stopped exactly once, observer released")
    func ownerDeallocated() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let probe = LeakTracker()
            let log = Log<ObserverNotice<Int>>()
            do {
                let owner = tracker.track(Owner())
                table.add(probe.track(tracker.track(Recorder())), owner: owner)
                table.add(ClosureListener { log.append($0) }, owner: owner)
                withExtendedLifetime(owner) { table.notify(1) }
            }
            // The owner is gone and nobody told the table: the next delivery finds out.
            table.notify(2)
            table.notify(3)
            table.sweep()
            #expect(log.all == [.added, .event(1), .stopped])
            #expect(probe.survivors.isEmpty, "the observer's strong reference was released")
            #expect(table.observerCount == 0)
        }
    }

    @Test("A bulk sweep ends observers of dead owners without any delivery")
    func sweepEndsDeadOwners() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let observers = (0..<5).map { tracker.track(Recorder("observer \($0)")) }
            do {
                let owner = tracker.track(Owner())
                for observer in observers { table.add(observer, owner: owner) }
                #expect(table.observerCount == 5)
            }
            #expect(table.observerCount == 0, "the count sees dead owners at once")
            table.sweep()
            for observer in observers {
                #expect(observer.notices == [.added, .stopped])
            }
            table.sweep()
            #expect(observers.allSatisfy { $0.stoppedCount == 1 }, "exactly once, however often swept")
        }
    }

    @Test(
        "Observers whose owners die as others join are ended by the sweep after mutations, while some stay for good and the table only grows"
    )
    func sweptAfterMutationsWhileGrowing() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let staying = (0..<20).map { _ in tracker.track(Owner("staying")) }
            let stayingObservers = staying.map { owner in tracker.track(Recorder("staying")) }
            for (observer, owner) in zip(stayingObservers, staying) { table.add(observer, owner: owner) }
            // A screen opens, observes, and is gone, a thousand times; nothing is ever delivered or removed. Each
            // addition finds every earlier screen's owner dead, and no entry is held for more than a bounded number
            // of additions.
            var mostHeld = 0
            for index in 0..<1_000 {
                let screen = tracker.track(Owner("screen \(index)"))
                table.add(tracker.track(Recorder("screen \(index)")), owner: screen)
                mostHeld = max(mostHeld, table.inspect().count)
            }
            #expect(mostHeld <= 2 * staying.count + 16, "entries held at most: \(mostHeld)")
            #expect(table.observerCount == staying.count)
            withExtendedLifetime(staying) {}
        }
    }

    @Test("A bounded sweep looks at so many entries per call, going on where the last stopped, and reaches them all")
    func boundedSweepGoesRound() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let observers = (0..<10).map { tracker.track(Recorder("observer \($0)")) }
            var owners = observers.map { _ in tracker.track(Owner()) }
            for (observer, owner) in zip(observers, owners) { table.add(observer, owner: owner) }
            // Observers 2, 5 and 9 lose their owners.
            for index in [2, 5, 9] { owners[index] = tracker.track(Owner()) }
            let stopped = { observers.indices.filter { observers[$0].stoppedCount == 1 } }
            // Each call says how many entries it did not look at: 9 left, 2 of them looked at.
            #expect(table.sweep(atMost: 3) == 7)  // 0, 1, 2
            #expect(stopped() == [2])
            #expect(table.sweep(atMost: 3) == 6)  // 3, 4, 5 (after 2, which is gone)
            #expect(stopped() == [2, 5])
            #expect(table.sweep(atMost: 3) == 5)  // 6, 7, 8
            #expect(stopped() == [2, 5])
            #expect(table.sweep(atMost: 3) == 5)  // 9, then round to 0 and 1
            #expect(stopped() == [2, 5, 9])
            #expect(table.observerCount == 7)
            // More than the table holds: a whole sweep.
            owners = []
            #expect(table.sweep(atMost: 100) == 0)
            #expect(stopped() == Array(0..<10))
            #expect(observers.allSatisfy { $0.stoppedCount == 1 })
        }
    }

    @Test("An observer ended among many is released at once, before the table drops its ended entries")
    func releasedBeforeCompaction() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let probe = LeakTracker()
            let owners = (0..<40).map { _ in tracker.track(Owner()) }
            let kept = (0..<40).filter { $0 != 7 }.map { index in
                let observer = tracker.track(Recorder("observer \(index)"))
                table.add(observer, owner: owners[index])
                return observer
            }
            do {
                let ended = probe.track(tracker.track(Recorder("observer 7")))
                table.add(ended, owner: owners[7])
            }
            table.removeObservers(ownedBy: owners[7])
            // A self-owned observer whose projection holds something: removing itself lets go of that too.
            let selfOwned = tracker.track(Recorder("self-owned"))
            do {
                let captured = probe.track(tracker.track(Owner("captured by the projection")))
                table.add(
                    selfOwned,
                    as: {
                        withExtendedLifetime(captured) {}
                        return $0
                    })
            }
            table.removeObservers(ownedBy: selfOwned)
            // Two ended entries are far from as many as the live ones: they are still in the table, hollow.
            #expect(probe.survivors.isEmpty, "the table let go of the observer, and the projection, as they ended")
            table.notify(1)
            #expect(kept.allSatisfy { $0.events == [1] })
            #expect(table.observerCount == 39)
            #expect(table.inspect().count == 39, "the inspection lists live observers only")
            withExtendedLifetime(owners) {}
        }
    }

    @Test(
        "Observers ended one by one, hundreds of them: the rest receive in order, counts see the live ones, and a bounded sweep counts only them"
    )
    func endedOneByOne() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let count = 600
            let observers = (0..<count).map { tracker.track(Recorder("observer \($0)")) }
            var owners: [Owner?] = observers.map { _ in tracker.track(Owner()) }
            for (observer, owner) in zip(observers, owners) { table.add(observer, owner: owner!) }
            // Two of every three end, by three ways in turn: removal by owner, the owner's death then a sweep of
            // a few entries, and the owner's death found by a delivery. A notification every 50 endings.
            var notified: [Int] = []
            let ending = (0..<count).filter { $0 % 3 != 0 }
            for (step, index) in ending.enumerated() {
                switch step % 3 {
                case 0: table.removeObservers(ownedBy: owners[index]!)
                case 1:
                    owners[index] = nil
                    table.sweep()
                default: owners[index] = nil
                }
                if step % 50 == 49 {
                    notified.append(step)
                    table.notify(step)
                }
            }
            table.sweep()
            let live = (0..<count).filter { $0 % 3 == 0 }
            #expect(table.observerCount == live.count)
            #expect(table.inspect().map(\.id) == live.map { UInt64($0 + 1) }, "live ones, in the order they came")
            #expect(live.allSatisfy { observers[$0].events == notified })
            #expect(ending.allSatisfy { observers[$0].stoppedCount == 1 })
            // Ended entries are not counted as entries a bounded sweep left.
            #expect(table.sweep(atMost: 10) == live.count - 10)
            // Added after: delivered after the others, in order.
            let late = tracker.track(Recorder("late"))
            let lateOwner = tracker.track(Owner())
            table.add(late, owner: lateOwner)
            table.notify(-1)
            #expect(late.events == [-1])
            #expect(live.allSatisfy { observers[$0].events == notified + [-1] })
            withExtendedLifetime((owners, lateOwner)) {}
        }
    }

    @Test("A bounded check finds an observer whose owners died, going round the table, and ends nothing")
    func boundedCheckGoesRound() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let observers = (0..<6).map { tracker.track(Recorder("observer \($0)")) }
            var owners = observers.map { _ in tracker.track(Owner()) }
            for (observer, owner) in zip(observers, owners) { table.add(observer, owner: owner) }
            let selfOwned = tracker.track(Recorder("self-owned"))
            table.add(selfOwned, as: { $0 })
            #expect(!table.hasEnded(atMost: 100), "every owner alive, the self-owned observer too")
            owners[4] = tracker.track(Owner())  // observer 4's owner dies
            #expect(!table.hasEnded(atMost: 2))  // 0, 1
            #expect(!table.hasEnded(atMost: 2))  // 2, 3
            #expect(table.hasEnded(atMost: 2))  // 4
            #expect(table.hasEnded(atMost: 100), "found again: nothing was ended")
            #expect(observers.allSatisfy { $0.stoppedCount == 0 })
            table.sweep()
            #expect(observers[4].stoppedCount == 1)
            #expect(!table.hasEnded(atMost: 100))
            withExtendedLifetime((owners, selfOwned)) {}
        }
    }

    @Test("A self-owned observer deallocated mid-stream gets no stopped notice")
    func selfOwnedDeallocatedGetsNoStopped() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let log = Log<String>()
            final class Watcher: Listener {
                let log: Log<String>
                init(log: Log<String>) { self.log = log }
                func hear(_ notice: ObserverNotice<Int>) { log.append("\(notice)") }
                deinit { log.append("deinit") }
            }
            var watcher: Watcher? = tracker.track(Watcher(log: log))
            table.add(watcher!, as: { $0 })
            table.notify(1)
            watcher = nil
            table.notify(2)
            table.sweep()
            #expect(log.all == ["added", "event(1)", "deinit"])
        }
    }

    @Test("Removal sends stopped exactly once, to every observer it ended")
    func removalSendsStoppedOnce() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let observer = tracker.track(Recorder())
            withExtendedLifetime(owner) {
                table.add(observer, owner: owner)
                table.removeObservers(ownedBy: owner)
                table.removeObservers(ownedBy: owner)
                table.sweep()
            }
            table.sweep()
            #expect(observer.notices == [.added, .stopped])
        }
    }

    @Test("Removing by an owner that owns nothing, or by nil, changes nothing")
    func removingStrangersIsHarmless() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let stranger = tracker.track(Owner())
            let observer = tracker.track(Recorder())
            withExtendedLifetime((owner, stranger)) {
                table.add(observer, owner: owner)
                table.removeObservers(ownedBy: stranger)
                table.removeObservers(ownedBy: nil)
                table.notify(1)
                #expect(observer.notices == [.added, .event(1)])
                table.removeObservers(ownedBy: owner)
            }
        }
    }

    @Test("An owner is kept alive through a delivery that found it alive")
    func ownerKeptAliveThroughDelivery() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let log = Log<String>()
            final class LoggingOwner: Sendable {
                let log: Log<String>
                init(log: Log<String>) { self.log = log }
                deinit { log.append("owner deinit") }
            }
            var owner: LoggingOwner? = tracker.track(LoggingOwner(log: log))
            let ownerBox = Log<LoggingOwner>()
            ownerBox.append(owner!)
            table.add(
                ClosureListener { notice in
                    guard case .event = notice else { return }
                    log.append("callback begins")
                    ownerBox.removeAll()  // drops the last reference the test holds, mid-callback
                    log.append("callback ends")
                }, owner: owner!)
            owner = nil
            table.notify(1)
            table.notify(2)
            #expect(log.all == ["callback begins", "callback ends", "owner deinit"])
        }
    }
}
