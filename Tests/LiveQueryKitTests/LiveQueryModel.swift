import Dispatch
import DocumentStoreKit
import LiveQueryKit
import TetherConcurrency
import TetherJSON

/// The brute-force reference the live-query model test checks against: the documents of `items` at every commit, and
/// the queries' results over them, computed by hand.
struct LiveQueryReference {
    /// One document as the reference sees it.
    struct Item: Hashable, Sendable {
        var group: Int
        var n: Int
    }

    /// The observed queries: text, and the result by brute force.
    enum Query: Int, CaseIterable, Sendable, CustomStringConvertible {
        /// `g == 1`, by `_id`.
        case groupOne
        /// `g == 1`, by `n` descending then `_id`, the first two.
        case topTwo
        /// `n >= 1`, by `n` then `_id`.
        case positive

        func pending(in items: StoreCollection) -> PendingQuery {
            switch self {
            case .groupOne: items.find("g == 1").sort("_id")
            case .topTwo:
                items.find("g == $args.g", args: ["g": 1]).sort("n", direction: .descending).sort("_id").limit(2)
            case .positive: items.find("n >= 1").sort("n").sort("_id")
            }
        }

        func evaluate(_ items: [String: Item]) -> [Row] {
            let rows = items.map { Row(id: $0.key, group: $0.value.group, n: $0.value.n) }
            switch self {
            case .groupOne:
                return rows.filter { $0.group == 1 }.sorted { $0.id < $1.id }
            case .topTwo:
                let sorted = rows.filter { $0.group == 1 }.sorted { ($1.n, $0.id) < ($0.n, $1.id) }
                return Array(sorted.prefix(2))
            case .positive:
                return rows.filter { $0.n >= 1 }.sorted { ($0.n, $0.id) < ($1.n, $1.id) }
            }
        }

        var description: String {
            switch self {
            case .groupOne: "g == 1 by _id"
            case .topTwo: "g == 1 by n desc, _id, limit 2"
            case .positive: "n >= 1 by n, _id"
            }
        }
    }

    /// A result's document, all of it: two results are equal only when every document's content is.
    struct Row: Hashable, Sendable, CustomStringConvertible {
        let id: String
        let group: Int
        let n: Int

        init(id: String, group: Int, n: Int) {
            self.id = id
            self.group = group
            self.n = n
        }

        init(_ document: Document) {
            self.init(id: document.id, group: document.int("g") ?? -1, n: document.int("n") ?? -1)
        }

        var description: String { "\(id):g\(group)n\(n)" }
    }

    /// The documents now.
    private(set) var items: [String: Item] = [:]
    /// Every committed state's results, one entry per query, in commit order (the first: the empty store).
    private(set) var states: [[[Row]]] = [Query.allCases.map { $0.evaluate([:]) }]

    /// A write returned: the store is at a new committed state (or, for a write that changed nothing, the same one
    /// again, which matches the same deliveries).
    mutating func committed(upsert id: String, _ item: Item?) {
        items[id] = item
        states.append(Query.allCases.map { $0.evaluate(items) })
    }

    /// The index of the state now.
    var current: Int { states.count - 1 }

    func result(_ query: Query, at state: Int) -> [Row] { states[state][query.rawValue] }
}

/// One step of a model sequence, decoded from a random number so that the property library's generators and
/// shrinking apply.
enum LiveQueryStep: CustomStringConvertible, Sendable {
    enum Kind: Int, CaseIterable, Sendable {
        /// `observeLocal`: signals by returning.
        case returning
        /// `observeLocal(deliverOn:)`.
        case returningOnQueue
        /// `observeLocalWithNextSignal`: the sequence signals when it says so (a slow handler).
        case signalling
        /// `observeLocalWithNextSignal(deliverOn:)`.
        case signallingOnQueue
        /// `observeLocalAsync`.
        case async
    }

    case upsert(id: String, group: Int, n: Int)
    case remove(id: String)
    case writeOther(id: String)
    case observe(LiveQueryReference.Query, Kind, ownerTied: Bool)
    /// Signals the observer (modulo the observers made so far) if it holds a signal; `twice`: calls it twice.
    case signal(observer: Int, twice: Bool)
    /// Stops the observer, or lets its owner go.
    case end(observer: Int)
    case advance(milliseconds: Int)
    case stepWallClock
    case waitForLiveQueries
    case failReads(Bool)
    /// The next write fails: before its commit, or after it (its acknowledgement lost).
    case failNextWrite(afterCommit: Bool)

    init(_ seed: Int) {
        let id = "d\((seed / 100) % 5)"
        switch seed % 100 {
        case 0..<30: self = .upsert(id: id, group: 1 + (seed / 500) % 2, n: (seed / 1_000) % 3)
        case 30..<37: self = .remove(id: id)
        case 37..<42: self = .writeOther(id: id)
        case 42..<52:
            self = .observe(
                LiveQueryReference.Query(rawValue: (seed / 100) % 3)!, Kind(rawValue: (seed / 300) % 5)!,
                ownerTied: (seed / 1_500) % 2 == 1)
        case 52..<70: self = .signal(observer: seed / 100, twice: (seed / 100) % 7 == 0)
        case 70..<75: self = .end(observer: seed / 100)
        case 75..<84: self = .advance(milliseconds: [1, 2, 4, 50, 300][(seed / 100) % 5])
        case 84..<86: self = .stepWallClock
        case 86..<93: self = .waitForLiveQueries
        case 93..<97: self = .failReads((seed / 100) % 2 == 0)
        default: self = .failNextWrite(afterCommit: (seed / 100) % 2 == 0)
        }
    }

    var description: String {
        switch self {
        case .upsert(let id, let group, let n): "upsert \(id) g\(group) n\(n)"
        case .remove(let id): "remove \(id)"
        case .writeOther(let id): "write other/\(id)"
        case .observe(let query, let kind, let ownerTied): "observe [\(query)] \(kind)\(ownerTied ? " owned" : "")"
        case .signal(let observer, let twice): "signal #\(observer)\(twice ? " twice" : "")"
        case .end(let observer): "end #\(observer)"
        case .advance(let milliseconds): "advance \(milliseconds) ms"
        case .stepWallClock: "step the wall clock"
        case .waitForLiveQueries: "wait for live queries"
        case .failReads(let fails): fails ? "reads fail" : "reads work"
        case .failNextWrite(let afterCommit): "the next write fails \(afterCommit ? "after" : "before") its commit"
        }
    }
}

/// What one observer of a model sequence received, checked against the reference as it comes.
final class ModelObserver: Sendable {
    struct State: Sendable {
        var deliveries: [(rows: [LiveQueryReference.Row], event: LiveQueryEvent)] = []
        var failures = 0
        /// The signal the handler holds (signalling kinds).
        var pending: SignalNext?
        /// `stop()` has returned: no handler call may begin. (An owner let go is checked at the call instead: a call
        /// that began before keeps the owner alive until it returns.)
        var isStopped = false
        /// Stopped, or its owner let go: not expected to reach the final state.
        var isEnded = false
        /// Promises broken at the moment of a call.
        var violations: [String] = []
        /// How many deliveries have been checked against the reference, and the state the last one matched.
        var checked = 0
        var position: Int
    }

    let number: Int
    let query: LiveQueryReference.Query
    let kind: LiveQueryStep.Kind
    let state: LockedValue<State>
    /// The owner of an owner-tied observer, while it lives; nil for one its handle owns.
    let owner = LockedValue<ModelOwner?>(nil)
    let handle = LockedValue<LiveQuery?>(nil)

    init(number: Int, query: LiveQueryReference.Query, kind: LiveQueryStep.Kind, registeredAt position: Int) {
        self.number = number
        self.query = query
        self.kind = kind
        self.state = LockedValue(State(position: position))
    }

    /// A handler call: `owner` is the owner as the handler's weak capture sees it (nil for a handle-owned observer).
    func received(_ documents: [Document], _ event: LiveQueryEvent, ownerGone: Bool, signal: SignalNext?) {
        state.withLock { state in
            if state.isStopped { state.violations.append("a handler call after stop() returned") }
            if ownerGone { state.violations.append("a handler call after the owner was deallocated") }
            state.deliveries.append((documents.map(LiveQueryReference.Row.init), event))
            state.pending = signal
        }
    }

    func failed() {
        state.withLock { state in
            if state.isStopped { state.violations.append("an error call after stop() returned") }
            state.failures += 1
        }
    }

    /// Checks the deliveries not yet checked: each is the query's result at a committed state no earlier than the last
    /// one's (nor than the state when the observer registered), differs from the one before, and says so in its event.
    func check(against reference: LiveQueryReference) -> [String] {
        state.withLock { state in
            var problems = state.violations
            state.violations = []
            while state.checked < state.deliveries.count {
                let index = state.checked
                let (rows, event) = state.deliveries[index]
                let previous = index > 0 ? state.deliveries[index - 1].rows : nil
                if let previous, previous == rows {
                    problems.append("delivery \(index) \(rows) equals the one before it")
                }
                switch (event, previous) {
                case (.initial, nil): break
                case (.update(let update), let previous?):
                    if update.oldDocuments.map(LiveQueryReference.Row.init) != previous {
                        problems.append("delivery \(index)'s update is from \(update.oldDocuments), not \(previous)")
                    }
                default: problems.append("delivery \(index)'s event is \(event)")
                }
                guard
                    let at = (state.position...reference.current).first(where: {
                        reference.result(query, at: $0) == rows
                    })
                else {
                    problems.append(
                        "delivery \(index) \(rows) is no committed state's result at or after state \(state.position)")
                    state.checked += 1
                    continue
                }
                state.position = at
                state.checked += 1
            }
            if let high = handle.withLock({ $0?.deliveryStatistics.heldHighWater }), high > 2 {
                problems.append("\(high) results held at once")
            }
            return problems.map { "observer #\(number) [\(query)] \(kind): \($0)" }
        }
    }

    var isEnded: Bool { state.withLock { $0.isEnded } }
    var last: [LiveQueryReference.Row]? { state.withLock { $0.deliveries.last?.rows } }
    func takeSignal() -> SignalNext? { state.withLock { $0.pending.take() } }
}

/// The owner of an owner-tied observer.
final class ModelOwner: Sendable {}
