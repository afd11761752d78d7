import TetherConcurrency

/// Counts an observer's calls against its owner's lifetime, for tests of the promise that no handler is called once
/// the owner's `deinit` has begun. Give the watch to a ``WatchedOwner``; call ``recordCall()`` first thing in the
/// handler: ``callsAfterDeinit`` must stay 0.
public final class DeinitWatch: Sendable {
    struct State {
        var hasDied = false
        var calls = 0
        var callsAfterDeinit = 0
    }

    let state = LockedValue(State())
    let tally: DeinitTally?

    /// Makes a watch for an owner still alive; its calls are also added to `tally`, when given (a stress test's
    /// many short-lived owners, summed once at its end).
    public init(tally: DeinitTally? = nil) {
        self.tally = tally
    }

    /// Records a handler call, and whether it came after the owner's deinit began.
    public func recordCall() {
        let late = state.withLock { state -> Bool in
            state.calls += 1
            if state.hasDied { state.callsAfterDeinit += 1 }
            return state.hasDied
        }
        tally?.record(late: late)
    }

    /// Whether the owner's deinit has begun.
    public var hasDied: Bool { state.withLock { $0.hasDied } }
    /// Every call recorded.
    public var calls: Int { state.withLock { $0.calls } }
    /// Calls recorded after the owner's deinit began: the promise is that there are none.
    public var callsAfterDeinit: Int { state.withLock { $0.callsAfterDeinit } }

    func markDied() {
        state.withLock { $0.hasDied = true }
    }
}

/// An owner whose deinit its ``DeinitWatch`` notes.
public final class WatchedOwner: Sendable {
    /// The watch told of this owner's deinit.
    public let watch: DeinitWatch

    /// Makes an owner noted by `watch`.
    public init(_ watch: DeinitWatch) {
        self.watch = watch
    }

    deinit {
        watch.markDied()
    }
}

/// The calls of many ``DeinitWatch``es, summed.
public final class DeinitTally: Sendable {
    let counts = LockedValue((calls: 0, callsAfterDeinit: 0))

    /// Makes an empty tally.
    public init() {}

    func record(late: Bool) {
        counts.withLock { counts in
            counts.calls += 1
            if late { counts.callsAfterDeinit += 1 }
        }
    }

    /// Every call recorded by the watches.
    public var calls: Int { counts.withLock { $0.calls } }
    /// Calls recorded after their owner's deinit began: the promise is that there are none.
    public var callsAfterDeinit: Int { counts.withLock { $0.callsAfterDeinit } }
}
