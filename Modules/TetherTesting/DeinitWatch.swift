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

    /// Makes a watch for an owner still alive.
    public init() {}

    /// Records a handler call, and whether it came after the owner's deinit began.
    public func recordCall() {
        state.withLock { state in
            state.calls += 1
            if state.hasDied { state.callsAfterDeinit += 1 }
        }
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
