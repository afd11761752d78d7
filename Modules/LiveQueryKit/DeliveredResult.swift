import TetherConcurrency

/// The last result one observer received, from which its next event is computed — ``LiveQueryEvent/initial``
/// first, then the difference from that result — and the commit that result is known to be current at. A value
/// whose copies share one lock box: an observer's handle, its lane's equality and its handler each hold one, and the
/// box is the only allocation.
struct DeliveredResult: Sendable {
    struct State: Sendable {
        var documents: [Document]?
        var commit: UInt64?
    }

    let state = LockedValue(State())

    init() {}

    /// The event for `documents`, which the observer receives now, as of `commit`.
    func event(for documents: [Document], commit: UInt64) -> LiveQueryEvent {
        state.withLock { state -> LiveQueryEvent in
            defer {
                state.documents = documents
                state.commit = max(state.commit ?? 0, commit)
            }
            guard let previous = state.documents else { return .initial }
            return .update(LiveQueryUpdate(from: previous, to: documents))
        }
    }

    /// The lane's equality, asked as a delivery would begin: a result equal to the last one delivered is not
    /// delivered again, and what the observer has is then known to be current at the later result's commit too.
    ///
    /// Equal content numbers settle it at once. Different ones do not: the numbers count changes from one computed
    /// result to the next, and a result changed and changed back while the observer was busy (each computed, ahead
    /// of a signal or for someone waiting) comes back with a new number and the documents last delivered. So the
    /// documents are compared then — once per delivery, as the event's difference reads them anyway. After a
    /// failure, a result is compared with the last documents delivered, which the observer kept. A failure is never
    /// unchanged.
    func isUnchanged(_ last: Snapshot, _ next: Snapshot) -> Bool {
        guard case .documents(let after, let commit, let nextContent) = next else { return false }
        let isUnchanged =
            if case .documents(let before, _, let lastContent) = last {
                lastContent == nextContent || before == after
            } else {
                state.withLock { $0.documents } == after
            }
        guard isUnchanged else { return false }
        state.withLock { $0.commit = max($0.commit ?? 0, commit) }
        return true
    }

    /// The commit the observer's result is current at: the one its last delivery reflects, or a later one whose
    /// result was equal. Nil before the first delivery.
    var commit: UInt64? {
        state.withLock { $0.commit }
    }

    /// Lets go of the last result (the observation has ended).
    func release() {
        let released = state.withLock { $0.documents.take() }
        _ = consume released  // released here, outside the lock
    }
}
