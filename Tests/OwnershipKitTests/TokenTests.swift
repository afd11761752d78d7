import OwnershipKit
import Testing
import TetherTesting
import TetherTestingTraits

/// Rule 9: an observation token ends the observation on cancel() or deinit.
@Suite("Tokens: rule 9", .onDedicatedThread)
struct TokenTests {
    @Test("cancel() ends the observation with one stopped notice; cancelling again is harmless")
    func cancelEnds() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let observer = tracker.track(Recorder())
            let token = tracker.track(table.observe(observer))
            table.notify(1)
            #expect(!token.isCancelled)
            token.cancel()
            token.cancel()
            #expect(token.isCancelled)
            table.notify(2)
            #expect(observer.notices == [.added, .event(1), .stopped])
        }
    }

    @Test("Deinitializing the token ends the observation at once")
    func deinitEnds() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let log = Log<ObserverNotice<Int>>()
            var token: ObservationToken? = tracker.track(table.observe(ClosureListener { log.append($0) }))
            table.notify(1)
            #expect(token != nil)
            token = nil
            #expect(log.all == [.added, .event(1), .stopped], "stopped arrives during deinit, not at a later sweep")
            table.notify(2)
            #expect(table.observerCount == 0)
        }
    }

    @Test("A token let go while a call of its observer runs dies there and then: the call finishes, none begins after")
    func releasedDuringCall() throws {
        try expectNoLeaks { tracker in
            let table = makeTable()
            let observer = tracker.track(Recorder())
            let binding = ObserverBinding()
            var token: ObservationToken? = tracker.track(table.observe(observer, binding: binding))
            weak let watched = token
            let id = try #require(binding.id)
            let called: Bool? = table.withLiveObserver(id) {
                token = nil  // its holder lets go, mid-call
                #expect(watched == nil, "the call in progress kept the token alive")
                #expect(!table.isObserving(id), "the observation outlived its token")
                return true
            }
            #expect(called == true)
            #expect(table.withLiveObserver(id) {} == nil, "a call began after the token's deinit")
            table.notify(1)
            #expect(observer.notices == [.added, .stopped])
        }
    }

    @Test("A token for an observer that has other owners removes only its own ownership")
    func tokenIsOneOwnerAmongOthers() {
        expectNoLeaks { tracker in
            let table = makeTable()
            let owner = tracker.track(Owner())
            let observer = tracker.track(Recorder())
            withExtendedLifetime(owner) {
                table.add(observer, owner: owner)
                var tokens: Set<ObservationToken> = []
                table.observe(observer).store(in: &tokens)
                #expect(observer.addedCount == 1)
                tokens.removeAll()
                table.notify(1)
                #expect(observer.notices == [.added, .event(1)])
                table.removeObservers(ownedBy: owner)
            }
        }
    }

    @Test("A token made with a custom action runs it exactly once")
    func customAction() {
        let log = Log<String>()
        do {
            let token = ObservationToken { log.append("cancelled") }
            var array: [ObservationToken] = []
            token.store(in: &array)
            array[0].cancel()
        }
        #expect(log.all == ["cancelled"])
    }

    @Test("A token outliving its table cancels harmlessly")
    func tokenOutlivesTable() {
        expectNoLeaks { tracker in
            var table: Table? = tracker.track(makeTable())
            let token = table!.observe(tracker.track(Recorder()))
            table = nil
            token.cancel()
        }
    }
}
