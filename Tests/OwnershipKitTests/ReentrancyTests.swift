import OwnershipKit
import Testing
import TetherTesting
import TetherTestingTraits

/// Rule 8: callbacks may add, remove and notify on the same table without deadlock.
@Suite("Re-entrancy: rule 8", .onDedicatedThread)
struct ReentrancyTests {
    @Test("A notification posted from a callback is delivered after it, in order, to everyone")
    func nestedNotifyIsQueued() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let log = Log<String>()
            withExtendedLifetime(owner) {
                table.add(
                    tracker.track(
                        Recorder("a") { notice in
                            guard case .event(let value) = notice else { return }
                            log.append("a begins \(value)")
                            if value == 1 { table.notify(2) }
                            log.append("a ends \(value)")
                        }), owner: owner)
                table.add(
                    tracker.track(
                        Recorder("b") { notice in
                            if case .event(let value) = notice { log.append("b \(value)") }
                        }), owner: owner)
                table.notify(1)
                table.removeObservers(ownedBy: owner)
            }
            #expect(log.all == ["a begins 1", "a ends 1", "b 1", "a begins 2", "a ends 2", "b 2"])
        }
    }

    @Test("A callback may remove its own observer, which then receives its stopped notice and nothing more")
    func removeSelfFromCallback() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let observer = tracker.track(
                Recorder("quitter") { notice in
                    if case .event(2) = notice { table.removeObservers(ownedBy: nil) }
                })
            let quitter = tracker.track(Recorder("self-remover"))
            let owner = tracker.track(Owner())
            withExtendedLifetime(owner) {
                table.add(
                    tracker.track(
                        Recorder("remover") { notice in
                            if case .event(2) = notice { table.removeObservers(ownedBy: quitter) }
                        }), owner: owner)
                table.add(quitter, as: { $0 })
                table.add(observer, owner: owner)
                table.notify(1)
                table.notify(2)
                table.notify(3)
                #expect(quitter.notices == [.added, .event(1), .stopped])
                #expect(observer.events == [1, 2, 3])
                table.removeObservers(ownedBy: owner)
            }
        }
    }

    @Test("Callbacks that add, remove and notify in a storm neither deadlock nor deliver twice")
    func callbackStorm() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owners = (0..<4).map { tracker.track(Owner("owner \($0)")) }
            withExtendedLifetime(owners) {
                for index in 0..<4 {
                    table.add(
                        tracker.track(
                            Recorder("stormer \(index)") { notice in
                                guard case .event(let value) = notice, value < 40 else { return }
                                let owner = owners[(value + index) % owners.count]
                                table.add(ClosureListener { _ in }, owner: owner)
                                table.removeObservers(ownedBy: owners[(value + index + 1) % owners.count])
                                table.notify(value + 1)
                            }), owner: owners[index])
                }
                table.notify(0)
                for owner in owners { table.removeObservers(ownedBy: owner) }
            }
            #expect(table.observerCount == 0)
        }
    }

    @Test("Removing from a callback of one table an observer of another never deadlocks")
    func crossTableRemoval() {
        expectNoLeaks { tracker in
            let left = makeTable()
            let right = makeTable()
            let leftOwner = tracker.track(Owner("left"))
            let rightOwner = tracker.track(Owner("right"))
            withExtendedLifetime((leftOwner, rightOwner)) {
                left.add(
                    tracker.track(
                        Recorder("left") { notice in
                            if case .event = notice {
                                right.removeObservers(ownedBy: rightOwner)
                                right.notify(9)
                            }
                        }), owner: leftOwner)
                right.add(
                    tracker.track(
                        Recorder("right") { notice in
                            if case .event = notice { left.removeObservers(ownedBy: leftOwner) }
                        }), owner: rightOwner)
                left.notify(1)
                #expect(left.observerCount == 1)
                #expect(right.observerCount == 0)
                left.removeObservers(ownedBy: leftOwner)
            }
        }
    }
}
