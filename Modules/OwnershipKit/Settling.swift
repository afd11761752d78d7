public import TetherConcurrency

/// What a removal leaves to wait for before its promise holds: the notices queued before it, delivered by whichever
/// thread drains the table, and the calls the ended observers had begun outside the table (in a lane, a task).
///
/// Waiting is skipped on a thread or task that is itself delivering — inside an observer's callback, which is what
/// keeps waits free of deadlock — and never happens in a `deinit`, which drops the value instead: once an observer
/// has ended, no call of it begins (``ObserverTable/withLiveObserver(_:_:)`` checks at the moment of the call).
@usableFromInline
struct Settling: Sendable {
    @usableFromInline let delivered: Watermark
    @usableFromInline let ticket: UInt64
    @usableFromInline let calls: EndedCalls

    @inlinable
    init(delivered: Watermark, ticket: UInt64, calls: EndedCalls) {
        self.delivered = delivered
        self.ticket = ticket
        self.calls = calls
    }

    /// Blocks until everything this removal concerns has been delivered or has returned.
    @usableFromInline
    func wait() {
        guard !DeliveryContext.isDelivering else { return }
        delivered.wait(until: ticket)
        calls.waitForEach()
    }

    /// Suspends until everything this removal concerns has been delivered or has returned.
    @usableFromInline
    func wait() async {
        guard !DeliveryContext.isDelivering else { return }
        await delivered.wait(until: ticket)
        switch calls {
        case .none: break
        case .one(let gate): await gate.waitForCalls()
        case .many(let gates): for gate in gates { await gate.waitForCalls() }
        }
    }
}

/// The gates of the entries one mutation ended while calls of theirs were running: almost always none, held without
/// allocating.
@usableFromInline
enum EndedCalls: Sendable {
    case none
    case one(CallGate)
    case many([CallGate])

    @inlinable
    mutating func append(_ gate: CallGate) {
        switch self {
        case .none: self = .one(gate)
        case .one(let first): self = .many([first, gate])
        case .many(var gates):
            self = .none
            gates.append(gate)
            self = .many(gates)
        }
    }

    /// Blocks until every gate's calls have returned.
    @usableFromInline
    func waitForEach() {
        switch self {
        case .none: break
        case .one(let gate): gate.waitForCalls()
        case .many(let gates): for gate in gates { gate.waitForCalls() }
        }
    }
}
