import Dispatch
import DocumentStoreKit
import LiveQueryKit
import PersistenceKit
import PropertyBased
import Testing
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// The live-query contract, checked by a model: random sequences of writes (that match, stop matching, change nothing,
/// touch another collection) and writes that fail before or after their commit, removals, observers of every variant (owner-tied and handle-tied, on their own queue or
/// a given one), signals early, late and twice, slow handlers, owners dying, `stop()`, clock steps and failing reads —
/// on the in-memory and SQLite stores, on a manual clock. After every step each observer's deliveries are checked
/// against a brute-force reference (``LiveQueryReference``): each is the query's result at a committed state, never
/// an earlier one than the delivery before, never equal to it, its event the difference from it; no call after the
/// observation ended or its owner died; at most two results held. At the end, every live observer is brought to the
/// final state.
///
/// A failure prints the sequence and the seed; `.fixedSeed("…")` on the test replays it.
/// `TETHER_MODEL_SEQUENCES` sets how many sequences each store runs (`Scripts/fuzz.sh live-query-model` runs 100,000).
@Suite("Live queries against a model: random operations, every delivery checked", .leakChecked)
struct LiveQueryModelTests {
    static let sequences = TestSetting(variable: "TETHER_MODEL_SEQUENCES", range: 1...10_000_000, default: 1_000)

    @Test(
        "Random sequences of operations, every delivery checked", .timeLimit(minutes: 30), arguments: TestStores.kinds)
    func randomSequences(kind: String) async {
        await propertyCheck(
            count: Self.sequences.value(),
            input: Gen.int(in: 0...999_999).array(of: 4...40), Gen.int(in: 0...3)
        ) { seeds, configuration in
            let steps = seeds.map(LiveQueryStep.init)
            do {
                recordModelProblems(
                    try await LiveQueryModelRun(kind: kind, configuration: configuration).run(steps),
                    model: "live-query model: \(kind)", steps: steps, context: "configuration \(configuration)")
            } catch {
                Issue.record("\(error)\nsteps: \(steps)")
            }
        }
    }
}

/// One model sequence: a store on a manual clock, its observers, and the reference.
final class LiveQueryModelRun {
    let clock = ManualTimeSource()
    let faulty: FaultyDocumentStore
    let store: Store
    let items: StoreCollection
    let queue = DispatchQueue(label: "tether.model.deliver-on")
    var reference = LiveQueryReference()
    var observers: [ModelObserver] = []

    /// `configuration`: bit 0, a quiet period of 3 ms; bit 1, no computing ahead of signals.
    init(kind: String, configuration: Int) throws {
        faulty = FaultyDocumentStore(base: try TestStores.documents(kind), faults: .init(), seed: 1)
        store = Store(
            faulty,
            configuration: .init(
                quietPeriod: configuration & 1 == 1 ? .milliseconds(3) : nil,
                anticipatesSignals: configuration & 2 == 0, timeSource: clock))
        items = store.collection("items")
    }

    /// Runs `steps`, checking after each; then brings every live observer to the final state. Returns what broke.
    func run(_ steps: [LiveQueryStep]) async throws -> [String] {
        var problems: [String] = []
        for (index, step) in steps.enumerated() {
            try await perform(step)
            problems += observers.flatMap { $0.check(against: reference) }.map {
                "after step \(index) (\(step)): \($0)"
            }
            if !problems.isEmpty { break }
        }
        if problems.isEmpty { problems += await settle() }
        for observer in observers { await end(observer) }
        return problems
    }

    func perform(_ step: LiveQueryStep) async throws {
        switch step {
        case .upsert(let id, let group, let n):
            try await write(id, .init(group: group, n: n)) {
                try await $0.upsert(["_id": .string(id), "g": .number(Double(group)), "n": .number(Double(n))])
            }
        case .remove(let id):
            try await write(id, nil) { try await $0.remove(id: id) }
        case .writeOther(let id):
            let other = store.collection("other")
            try await write(id, reference.items[id]) { _ in
                try await other.upsert(["_id": .string(id), "g": 1, "n": 1])
            }
        case .observe(let query, let kind, let ownerTied):
            try observe(query, kind, ownerTied: ownerTied)
        case .signal(let number, let twice):
            guard !observers.isEmpty, let signal = observers[number % observers.count].takeSignal() else { return }
            signal()
            if twice { signal() }
        case .end(let number):
            guard !observers.isEmpty else { return }
            await end(observers[number % observers.count])
        case .advance(let milliseconds):
            clock.advance(by: .milliseconds(milliseconds))
        case .stepWallClock:
            clock.stepWallClock(by: .seconds(-30))
        case .waitForLiveQueries:
            await store.waitForLiveQueries()
        case .failReads(let fails):
            faulty.faults.readFailure = fails ? 1 : 0
        case .failNextWrite(let afterCommit):
            faulty.faults.failure = 1
            faulty.faults.afterCommit = afterCommit ? 1 : 0
        }
    }

    /// Writes `item` (nil: removes it) through `body`. A write that fails leaves the reference as it was, unless the
    /// store's commit moved on: then it committed and only its acknowledgement was lost.
    func write(
        _ id: String, _ item: LiveQueryReference.Item?, _ body: (StoreCollection) async throws -> Void
    ) async throws {
        let before = store.lastCommit
        do {
            try await body(items)
        } catch is PersistenceError {
            faulty.faults.failure = 0
            if store.lastCommit > before { reference.committed(upsert: id, item) }
            return
        }
        reference.committed(upsert: id, item)
    }

    func observe(_ query: LiveQueryReference.Query, _ kind: LiveQueryStep.Kind, ownerTied: Bool) throws {
        let observer = ModelObserver(
            number: observers.count, query: query, kind: kind, registeredAt: reference.current)
        let owner = ownerTied ? ModelOwner() : nil
        observer.owner.withLock { $0 = owner }
        weak let weakOwner = owner
        let isGone: @Sendable () -> Bool = { ownerTied && weakOwner == nil }
        let pending = query.pending(in: items)
        let onError: PendingQuery.ErrorHandler = { _ in observer.failed() }
        let handle: LiveQuery
        switch (kind, owner) {
        case (.returning, nil):
            handle = try pending.observeLocal(onError: onError) {
                observer.received($0, $1, ownerGone: isGone(), signal: nil)
            }
        case (.returning, let owner?):
            handle = try pending.observeLocal(owner: owner, onError: onError) {
                observer.received($0, $1, ownerGone: isGone(), signal: nil)
            }
        case (.returningOnQueue, nil):
            handle = try pending.observeLocal(deliverOn: queue, onError: onError) {
                observer.received($0, $1, ownerGone: isGone(), signal: nil)
            }
        case (.returningOnQueue, let owner?):
            handle = try pending.observeLocal(owner: owner, deliverOn: queue, onError: onError) {
                observer.received($0, $1, ownerGone: isGone(), signal: nil)
            }
        case (.signalling, nil):
            handle = try pending.observeLocalWithNextSignal(onError: onError) {
                observer.received($0, $1, ownerGone: isGone(), signal: $2)
            }
        case (.signalling, let owner?):
            handle = try pending.observeLocalWithNextSignal(owner: owner, onError: onError) {
                observer.received($0, $1, ownerGone: isGone(), signal: $2)
            }
        case (.signallingOnQueue, nil):
            handle = try pending.observeLocalWithNextSignal(deliverOn: queue, onError: onError) {
                observer.received($0, $1, ownerGone: isGone(), signal: $2)
            }
        case (.signallingOnQueue, let owner?):
            handle = try pending.observeLocalWithNextSignal(owner: owner, deliverOn: queue, onError: onError) {
                observer.received($0, $1, ownerGone: isGone(), signal: $2)
            }
        case (.async, let owner):
            handle = try pending.observeLocalAsync(owner: owner, onError: onError) {
                observer.received($0, $1, ownerGone: isGone(), signal: nil)
            }
        }
        observer.handle.withLock { $0 = handle }
        observers.append(observer)
    }

    /// Ends an observation: `stop()` for one its handle owns, the owner let go for an owner-tied one. Either way no
    /// handler call begins from here on.
    func end(_ observer: ModelObserver) async {
        guard !observer.isEnded else { return }
        if let owner = observer.owner.withLock({ $0.take() }) {
            _ = consume owner
            observer.state.withLock { $0.isEnded = true }
        } else if let handle = observer.handle.withLock({ $0 }) {
            await handle.stop()
            observer.state.withLock {
                $0.isStopped = true
                $0.isEnded = true
            }
        }
        observer.handle.withLock { $0 = nil }
    }

    /// Reads work again; every live observer signals what it holds, and the clock moves on (for retries), until each
    /// holds the final result. Returns the observers that never got there, and anything a check finds meanwhile.
    func settle() async -> [String] {
        faulty.faults.readFailure = 0
        let live = observers.filter { !$0.isEnded }
        let finals = live.map { reference.result($0.query, at: reference.current) }
        let (store, clock) = (store, clock)
        do {
            try await eventually {
                clock.advance(by: .seconds(10))
                await store.waitForLiveQueries()
                for observer in live { observer.takeSignal()?() }
                return zip(live, finals).allSatisfy { $0.last == $1 }
            }
        } catch {
            // What the engine and the lanes hold, to tell a lost wake-up from a lost delivery.
            let inspection = store.inspect()
            let state = inspection.liveQueries.map { query in
                "\(query.query): \(query.documents) documents at \(query.commit), held back \(query.isHeldBack), "
                    + "failing \(query.isFailing); observers "
                    + query.observers.map {
                        "busy \($0.isBusy), waiting \($0.waiting.map { "\($0.documents)" } ?? "-"), delivered at "
                            + "\($0.deliveredCommit.map(String.init) ?? "-"), \($0.delivery)"
                    }.joined(separator: "; ")
            }
            return zip(live, finals).filter { $0.last != $1 }.map { observer, final in
                "observer #\(observer.number) [\(observer.query)] \(observer.kind) ends on "
                    + "\(observer.last.map(\.description) ?? "nothing"), not \(final); last commit \(inspection.lastCommit), "
                    + "\(inspection.statistics); " + state.joined(separator: " | ")
            }
        }
        return observers.flatMap { $0.check(against: reference) }.map { "settling: \($0)" }
    }
}
