import Dispatch
import Foundation
import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// How long the churn runs: 20 s by default, `TETHER_STRESS_SECONDS` to change it.
let stressSeconds = Double(StressLoad.churnSeconds)

@Suite("Live queries: owners churning on 8 threads while a writer commits", .loadsEveryCore, .leakChecked)
struct LiveQueryOwnerChurnStressTests {
    @Test(
        "Every variant, owners and handles dying at random: no call after a deinit, nobody left observing",
        .enabled(if: stressSeconds > 0, "TETHER_STRESS_SECONDS=0 turns the churn off (CI's ThreadSanitizer stage)"),
        arguments: TestStores.kinds)
    func churn(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let queues = (0..<4).map { DispatchQueue(label: "churn \($0)") }
        let signallers = DispatchQueue(label: "signallers", attributes: .concurrent)
        let tally = DeinitTally()
        let lateAfterStop = LockedValue(0)
        // Lives through the run, so that something is surely delivered however loaded the machine.
        let controlWatch = DeinitWatch(tally: tally)
        var controlOwner: WatchedOwner? = WatchedOwner(controlWatch)
        try items.find("group == 0").observeLocal(owner: controlOwner!) { _, _ in controlWatch.recordCall() }
        // The writer commits until the churn is over; the churn starts once it has committed, so that the two
        // overlap however the machine schedules them (under ThreadSanitizer, a writer task started beside the
        // churn's threads once made no commit before their deadline).
        let writing = LockedValue(true)
        let written = LockedValue(0)
        let writer = Task {
            while writing.withLock({ $0 }) {
                let commit = written.withLock { commit in
                    commit += 1
                    return commit
                }
                try await items.upsert([
                    "_id": .string("d\(commit % 64)"), "group": .number(Double(commit % 4)),
                    "n": .number(Double(commit)),
                ])
            }
            return written.withLock { $0 }
        }
        try await eventually { written.withLock { $0 } > 0 }
        let deadline = Date().addingTimeInterval(stressSeconds)
        let workers = startStressThreads(8) { _, pace in
            var generator = SystemRandomNumberGenerator()
            var held: [AnyObject] = []
            var handles: [LiveQuery] = []
            while Date() < deadline {
                pace()
                let group = Double(Int.random(in: 0..<4, using: &generator))
                let query = items.find("group == $args.g", args: ["g": .number(group)])
                let watch = DeinitWatch(tally: tally)
                let owner = WatchedOwner(watch)
                do {
                    switch Int.random(in: 0..<5, using: &generator) {
                    case 0:
                        try query.observeLocal(owner: owner) { _, _ in watch.recordCall() }
                        held.append(owner)
                    case 1:
                        let queue = queues.randomElement(using: &generator)!
                        try query.observeLocal(owner: owner, deliverOn: queue) { _, _ in watch.recordCall() }
                        held.append(owner)
                    case 2:
                        // Signals later, from elsewhere — or never: the result waits while the owner may die.
                        let delay = Int.random(in: 0..<3, using: &generator)
                        try query.observeLocalWithNextSignal(owner: owner) { _, _, signalNext in
                            watch.recordCall()
                            guard delay > 0 else { return }
                            signallers.asyncAfter(deadline: .now() + .milliseconds(delay)) { signalNext() }
                        }
                        held.append(owner)
                    case 3:
                        let stopped = LockedValue(false)
                        let handle = try query.observeLocal { _, _ in
                            if stopped.withLock({ $0 }) { lateAfterStop.withLock { $0 += 1 } }
                        }
                        if Bool.random(using: &generator) {
                            handle.stop()
                            stopped.withLock { $0 = true }
                        } else {
                            handles.append(handle)  // dropped later, without a stop
                        }
                    default:
                        try query.observeLocal(owner: owner, deliverOn: queues[0]) { _, _ in watch.recordCall() }
                    }
                } catch {
                    Issue.record(error)
                }
                if held.count > 12 { held.remove(at: Int.random(in: 0..<held.count, using: &generator)) }
                if handles.count > 6 { handles.remove(at: Int.random(in: 0..<handles.count, using: &generator)) }
            }
            held.removeAll()
            handles.removeAll()
        }
        try await workers.wait(within: .seconds(stressSeconds + 300))
        writing.withLock { $0 = false }
        let commits = try await writer.value
        try await eventually { tally.calls > 0 }
        controlOwner = nil
        // A few more commits sweep every observer whose owner died without a delivery since — one, unless every
        // query is held back by a busy observer (a next-signal one whose owner died before it signalled): then the
        // engine checks for dead owners at one commit in 16 (HeldBackTests.ownerDiesWhileHeldBack).
        for index in 0..<16 { try await items.upsert(["_id": .string("last \(index)")]) }
        do {
            try await eventually {
                for queue in queues { queue.sync {} }
                return store.statistics.observers == 0
            }
        } catch {
            Issue.record("still observing after the churn: \(leftObserving(store))")
            throw error
        }
        signallers.sync(flags: .barrier) {}
        #expect(commits > 0)
        #expect(tally.callsAfterDeinit == 0, "calls after their owner's deinit began")
        #expect(lateAfterStop.withLock { $0 } == 0, "calls after stop() returned")
    }
}

/// What a store still observes, for a wait that did not end: the engine's counts, and each query's observers in its
/// table — live, busy — so that a failure says whether the engine kept observers the table had ended.
private func leftObserving(_ store: Store) -> String {
    let inspection = store.inspect()
    let statistics = inspection.statistics
    let queries = inspection.liveQueries.map { query in
        let busy = query.observers.filter(\.isBusy).count
        let live = query.observers.filter(\.isObserving).count
        return "\(query.query): \(query.observers.count) in the table, \(live) observing, \(busy) busy"
            + (query.isHeldBack ? ", held back" : "")
    }
    return
        "\(statistics.observers) observers of \(statistics.queries) queries registered; \(statistics.rounds) rounds, "
        + "\(statistics.deferrals) commits held back, last commit \(inspection.lastCommit), caught up to "
        + "\(statistics.caughtUpCommit); "
        + (queries.isEmpty ? "no query in the table" : queries.joined(separator: "; "))
}
