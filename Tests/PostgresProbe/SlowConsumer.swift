import DocumentStoreKit
import Foundation
import LiveQueryKit
import PostgresAdapter
import TetherConcurrency
import TetherTesting

/// The slow consumer of `observe-slow`: it keeps each result's signal until the store has seen `lag` commits past the
/// result's (or has seen the last commit), so that results pile up behind it if anything lets them — and, under
/// next-signal, nothing does.
func observeSlowly(_ documents: PostgresDocumentStore, last: UInt64, lag: UInt64) async throws {
    struct Held: Sendable {
        var commit: UInt64 = 0
        var signal: SignalNext?
    }
    let held = LockedValue(Held())
    let done = OneShot<Void>()
    let store = Store(documents)
    // Every commit the store hears of (its own feed, from the other process's writes): time to signal?
    let subscription = documents.changes.subscribeInline(
        { set in
            let signal = held.withLock { held -> SignalNext? in
                guard set.commits.upperBound >= min(held.commit + lag, last) else { return nil }
                return held.signal.take()
            }
            signal?()
        }, finished: {})
    // The handle, for the commit of the delivery being handled (set before any commit reaches the query).
    let handle = LockedValue<LiveQuery?>(nil)
    let liveQuery = try store.collection("items").find("group == 'a'").observeLocalWithNextSignal {
        documents, _, signalNext in
        let commit = handle.withLock { $0 }?.deliveredCommit ?? 0
        ProbeOutput.say("result \(commit) \(documents.count)")
        if commit >= last {
            done.fire()
            return
        }
        // Signals at once if the store is already `lag` commits past this result, else keeps the signal.
        let now = store.lastCommit
        let keep = held.withLock { held -> Bool in
            held.commit = commit
            guard now < min(commit + lag, last) else { return false }
            held.signal = signalNext
            return true
        }
        if !keep { signalNext() }
    }
    handle.withLock { $0 = liveQuery }
    ProbeOutput.say("ready")
    await done.wait()
    let statistics = liveQuery.deliveryStatistics
    ProbeOutput.say(
        "statistics \(statistics.submitted) \(statistics.delivered) \(statistics.coalesced) \(statistics.heldHighWater)"
    )
    let engine = store.statistics
    ProbeOutput.say("engine \(engine.evaluations) \(engine.incrementalUpdates) \(engine.deferrals)")
    await liveQuery.stop()
    subscription.cancel()
}
