import OwnershipKit
import Testing
import TetherTesting
import TetherTestingTraits

/// Rule 4: class instances are identified by identity; closures and structs never are.
@Suite("Identity: rule 4", .onDedicatedThread)
struct IdentityTests {
    @Test("Adding the same object again adds owners, never a second entry or added notice")
    func sameObjectAddsOwners() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let a = tracker.track(Owner("a"))
            let b = tracker.track(Owner("b"))
            let observer = tracker.track(Recorder())
            withExtendedLifetime((a, b)) {
                table.add(observer, owner: a)
                table.add(observer, owner: a)
                table.add(observer, owner: b)
                table.add(observer, as: { $0 })
                #expect(table.observerCount == 1)
                table.notify(1)
                #expect(observer.notices == [.added, .event(1)])
                table.removeObservers(ownedBy: a)
                table.removeObservers(ownedBy: b)
                table.removeObservers(ownedBy: observer)
                #expect(observer.notices == [.added, .event(1), .stopped])
            }
        }
    }

    @Test("Structs and closures are never deduplicated")
    func structsNeverDeduplicated() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let log = Log<ObserverNotice<Int>>()
            let listener = ClosureListener { log.append($0) }
            withExtendedLifetime(owner) {
                table.add(listener, owner: owner)
                table.add(listener, owner: owner)
                #expect(table.observerCount == 2)
                table.notify(5)
                #expect(log.all == [.added, .added, .event(5), .event(5)])
                table.removeObservers(ownedBy: owner)
                #expect(log.all.suffix(2) == [.stopped, .stopped])
            }
        }
    }

    @Test("Re-adding after removal gives a fresh entry and a fresh added notice")
    func reAddAfterRemoval() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let observer = tracker.track(Recorder())
            withExtendedLifetime(owner) {
                table.add(observer, owner: owner)
                table.removeObservers(ownedBy: owner)
                table.add(observer, owner: owner)
                table.notify(1)
                table.removeObservers(ownedBy: owner)
            }
            #expect(observer.notices == [.added, .stopped, .added, .event(1), .stopped])
        }
    }

    @Test("A new object at a dead observer's address is a new observer")
    func addressReuseIsNotIdentity() {
        expectNoLeaks { tracker in
            let table = makeTable()
            // Churn self-owned observers: their memory is reused, often at the same address.
            for round in 0..<200 {
                let observer = tracker.track(Recorder("round \(round)"))
                table.add(observer, as: { $0 })
                table.notify(round)
                #expect(observer.notices == [.added, .event(round)])
            }
            #expect(table.observerCount == 0)
        }
    }
}
