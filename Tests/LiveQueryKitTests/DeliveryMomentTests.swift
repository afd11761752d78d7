import DeliveryKit
import Dispatch
import Foundation
import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Ownership holds at the moment of delivery for live queries: a result that waited — on a suspended queue, behind a
/// running handler, for `signalNext` — is checked when its handler would run, on both stores.
@Suite("Live queries: ownership holds at the moment of delivery", .timeLimit(minutes: 2), .leakChecked)
struct LiveQueryDeliveryMomentTests {
    @Test(
        "Owner-tied, deliverOn: the owner dies while the initial result waits on the queue — no call",
        arguments: TestStores.kinds)
    func ownerDiesWhileResultWaitsOnQueue(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let queue = DispatchQueue(label: "suspended")
        queue.suspend()
        let watch = DeinitWatch()
        do {
            let owner = WatchedOwner(watch)
            try items.findAll().observeLocal(owner: owner, deliverOn: queue) { _, _ in watch.recordCall() }
            try await eventually { store.statistics.queries == 1 && store.statistics.evaluations == 1 }
        }
        #expect(watch.hasDied)
        queue.resume()
        try await eventually {
            queue.sync {}
            return store.statistics.observers == 0
        }
        queue.sync {}
        #expect(watch.calls == 0)
        #expect(watch.callsAfterDeinit == 0)
    }

    /// The owner dies while its next-signal observer holds its signal, after a commit: either a newer result is
    /// owed to it (a second, free observer of the same query makes the engine compute it; the busy one takes it when
    /// it signals), or the engine holds the change back (every observer is busy). Either way the signal then calls
    /// nothing: the owed result begins and is dropped at the check, or the held-back change is never applied.
    @Test(
        "Next-signal: the owner dies while a newer result is owed to it, or held back — signalling calls nothing",
        arguments: TestStores.kinds, [false, true])
    func ownerDiesWhileSignalOutstanding(kind: String, heldBack: Bool) async throws {
        // Held back means held back here: nothing is computed before a signal.
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let watch = DeinitWatch()
        let signal = LockedValue<SignalNext?>(nil)
        let control = heldBack ? nil : try items.findAll().observeLocal { _, _ in }
        let queue = DispatchQueue(label: "handler")
        let liveQuery: LiveQuery
        do {
            let owner = WatchedOwner(watch)
            liveQuery = try items.findAll().observeLocalWithNextSignal(owner: owner, deliverOn: queue) {
                _, _, signalNext in
                watch.recordCall()
                signal.withLock { $0 = signalNext }  // holds the signal: the next result waits
            }
            try await eventually { signal.withLock { $0 } != nil }
            queue.sync {}  // the first call returns while the test holds the owner, as in the test below
            // The free observer idle in the engine's eyes before the commit (its first result handled, its idle signal
            // taken): otherwise every observer is busy, and the change is held back in this case too.
            try await eventually { store.statistics.idleObservers == (heldBack ? 0 : 1) }
            try await items.upsert(["_id": "b"])
            if heldBack {
                // (Not waitForLiveQueries: that brings a held-back query up to date.)
                try await eventually { store.statistics.deferrals == 1 }
                #expect(store.statistics.incrementalUpdates == 0, "the change is held back, not computed")
                #expect(liveQuery.deliveryStatistics.submitted == 1)
            } else {
                await store.waitForLiveQueries()
                #expect(store.statistics.deferrals == 0, "the free observer takes every result")
                #expect(liveQuery.deliveryStatistics.submitted == 1, "owed to the busy observer, not submitted")
            }
        }
        #expect(watch.hasDied)
        signal.withLock { $0.take() }?()
        try await eventually { store.statistics.observers == (heldBack ? 0 : 1) && liveQuery.isStopped }
        #expect(watch.calls == 1)
        #expect(watch.callsAfterDeinit == 0)
        let statistics = liveQuery.deliveryStatistics
        if !heldBack { #expect(statistics.delivered == 2, "taken when it signalled, begun, dropped at the check") }
        #expect(statistics.heldHighWater <= 2)
        await control?.stop()
    }

    @Test(
        "Next-signal: the owner dies while a result is staged in its lane — signalling calls nothing",
        arguments: TestStores.kinds)
    func ownerDiesWhileResultStaged(kind: String) async throws {
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let queue = DispatchQueue(label: "handler")
        let watch = DeinitWatch()
        let signal = LockedValue<SignalNext?>(nil)
        let liveQuery: LiveQuery
        do {
            let owner = WatchedOwner(watch)
            liveQuery = try items.findAll().observeLocalWithNextSignal(owner: owner, deliverOn: queue) {
                _, _, signalNext in
                watch.recordCall()
                signal.withLock { $0 = signalNext }
            }
            try await eventually { signal.withLock { $0 } != nil }
            // The first call returns while the test still holds the owner, so the owner's death below is noticed by
            // the signal's check alone (a call the owner outlives ends the observation as it returns instead).
            queue.sync {}
            try await items.upsert(["_id": "b"])
            // Its only observer busy: the wait computes the result, staged in the lane for the signal to take.
            await store.waitForLiveQueries()
            #expect(liveQuery.deliveryStatistics.submitted == 2)
        }
        #expect(watch.hasDied)
        // The signal begins the staged delivery on the queue, where the owner check drops it.
        signal.withLock { $0.take() }?()
        queue.sync {}
        #expect(watch.calls == 1)
        #expect(watch.callsAfterDeinit == 0)
        #expect(liveQuery.deliveryStatistics.delivered == 2, "begun from the lane, dropped at the check")
        try await eventually { store.statistics.observers == 0 && liveQuery.isStopped }
    }

    @Test(
        "The owner dies while the handler runs: kept alive for that call, unregistered as it returns — no commit needed — and no call after its deinit",
        arguments: TestStores.kinds)
    func ownerDiesWhileHandlerRuns(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let queue = DispatchQueue(label: "handler")
        let watch = DeinitWatch()
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let ownerAliveDuringCall = LockedValue<Bool?>(nil)
        let control = Received()
        let controlOwner = WatchedOwner(DeinitWatch())
        try items.findAll().observeLocal(owner: controlOwner, deliverOn: queue) { control.append($0, $1) }
        do {
            let owner = WatchedOwner(watch)
            try items.findAll().observeLocal(owner: owner, deliverOn: queue) { _, event in
                watch.recordCall()
                guard event.isInitial else { return }
                entered.signal()
                proceed.wait()
                ownerAliveDuringCall.withLock { $0 = !watch.hasDied }
            }
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    entered.wait()
                    continuation.resume()
                }
            }
        }  // the test lets go of the owner while its handler runs
        proceed.signal()
        try await eventually { watch.hasDied }
        // Nothing committed, nothing swept: the call that kept the owner alive ended its observation as it returned
        // (a sweep during the call saw the owner alive, and none need come after).
        try await eventually(within: .seconds(10)) { store.statistics.observers == 1 }
        // Two commits: the second's result reaching the control observer means the first's was offered to every
        // lane before it; flushing the queue then runs anything the dead observer's lane handed over.
        try await items.upsert(["_id": "b"])
        try await items.upsert(["_id": "c"])
        try await control.wait { $0.last == ["a", "b", "c"] }
        queue.sync {}
        #expect(ownerAliveDuringCall.withLock { $0 } == true, "the call kept its owner alive")
        #expect(watch.calls == 1)
        #expect(watch.callsAfterDeinit == 0)
        #expect(store.statistics.observers == 1)
        withExtendedLifetime(controlOwner) {}
    }

    @Test("A handle dropped while its result waits on the queue: no call", arguments: TestStores.kinds)
    func handleDroppedWhileResultWaits(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let queue = DispatchQueue(label: "suspended")
        queue.suspend()
        let calls = LockedValue(0)
        do {
            let liveQuery = try items.findAll().observeLocal(deliverOn: queue) { _, _ in calls.withLock { $0 += 1 } }
            try await eventually { liveQuery.deliveryStatistics.delivered == 1 }  // handed to the suspended queue
        }  // the handle is deinitialized: it ends the observation without waiting
        queue.resume()
        try await eventually {
            queue.sync {}
            return store.statistics.observers == 0
        }
        queue.sync {}
        #expect(calls.withLock { $0 } == 0)
    }

    @Test("stop() from inside the handler returns at once")
    func stopInsideTheHandler() async throws {
        let store = Store.inMemory()
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let inside = LockedValue<LiveQuery?>(nil)
        let stoppedInside = LockedValue(false)
        let liveQuery = try items.findAll().observeLocal { _, _ in
            inside.withLock { $0 }?.stop()  // would deadlock if it waited for itself
            stoppedInside.withLock { $0 = true }
        }
        inside.withLock { $0 = liveQuery }
        try await items.upsert(["_id": "b"])
        try await eventually { stoppedInside.withLock { $0 } || liveQuery.isStopped }
        try await eventually { store.statistics.observers == 0 }
        inside.withLock { $0 = nil }
    }

    /// Eight, not the fifty: each blocked handler holds a dispatch worker thread, and under ThreadSanitizer
    /// fifty of them held the process's dispatch pool for 40–70 s, starving every suite beside it (URLSession, GRDB,
    /// the live-query queues). Eight stops are still four times the cooperative pool's two threads.
    @Test("await stop() for 8 queries whose handlers are blocked elsewhere leaves Swift concurrency's threads free")
    func asyncStopDoesNotStarveThePool() async throws {
        let store = Store.inMemory()
        let items = store.collection("items")
        try await items.upsert(["_id": "a"])
        let count = 8
        let release = DispatchSemaphore(value: 0)
        let entered = LockedValue(0)
        let queries = try (0..<count).map { index in
            try items.findAll().observeLocal(deliverOn: DispatchQueue(label: "blocked \(index)")) { _, _ in
                entered.withLock { $0 += 1 }
                release.wait()
            }
        }
        try await eventually { entered.withLock { $0 } == count }
        // A watchdog, for the failure only: if the stops held the pool, nothing below could run; it releases the
        // handlers after a correctness deadline and the test then fails instead of hanging.
        let releasedByWatchdog = LockedValue(false)
        let watchdog = DispatchWorkItem {
            releasedByWatchdog.withLock { $0 = true }
            for _ in 0..<count { release.signal() }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
        let stops = queries.map { query in Task { await query.stop() } }
        // Every stop has ended its observation and is waiting for its blocked handler; looking needs the pool too.
        try await eventually { queries.allSatisfy(\.isStopped) }
        let unrelated = await Task { 42 }.value  // must be scheduled while all 50 stops wait
        let starved = releasedByWatchdog.withLock { $0 }
        watchdog.cancel()
        #expect(unrelated == 42)
        #expect(!starved, "an unrelated task ran only once the blocked handlers were released")
        if !starved { for _ in 0..<count { release.signal() } }
        for stop in stops { await stop.value }
        #expect(store.statistics.observers == 0)
    }
}
