import TetherConcurrency

/// The last result one observer received, from which its next event is computed: ``LiveQueryEvent/initial`` first,
/// then the difference from that result.
final class DeliveredResult: Sendable {
    let last = LockedValue<[Document]?>(nil)

    /// The event for `documents`, which the observer receives now.
    func event(for documents: [Document]) -> LiveQueryEvent {
        last.withLock { last -> LiveQueryEvent in
            defer { last = documents }
            guard let previous = last else { return .initial }
            return .update(LiveQueryUpdate(from: previous, to: documents))
        }
    }

    /// Lets go of the last result (the observation has ended).
    func release() {
        let released = last.withLock { $0.take() }
        _ = consume released  // released here, outside the lock
    }
}
