import MutationOutboxKit
import TetherConcurrency

/// The service's mutations as ``MutationsSnapshot``s: every change makes a new version, and a reader waiting for a
/// version after the one it has is handed the latest — never a queue of them, however fast they change.
final class MutationTracker: Sendable {
    private struct State: Sendable {
        var version: UInt64 = 0
        var snapshot = MutationsSnapshot.empty
        var readers: [UInt64: (after: UInt64, continuation: CheckedContinuation<(UInt64, MutationsSnapshot)?, Never>)] =
            [:]
        var nextReader: UInt64 = 0
    }

    private let state = LockedValue(State())

    /// The latest snapshot and its version.
    var latest: (version: UInt64, snapshot: MutationsSnapshot) {
        state.withLock { ($0.version, $0.snapshot) }
    }

    /// Changes the snapshot and hands the new one to every waiting reader.
    func change(_ body: (inout MutationsSnapshot) -> Void) {
        let (ready, version, snapshot) = state.withLock { state in
            body(&state.snapshot)
            state.version &+= 1
            let ready = state.readers.values.map(\.continuation)
            state.readers.removeAll()
            return (ready, state.version, state.snapshot)
        }
        for reader in ready { reader.resume(returning: (version, snapshot)) }
    }

    func began(_ mutation: MutationsSnapshot.Mutation) {
        change { $0.pending.append(mutation) }
    }

    func phase(_ id: String, _ phase: MutationsSnapshot.Mutation.Phase) {
        change { snapshot in
            guard let index = snapshot.pending.firstIndex(where: { $0.id == id }) else { return }
            snapshot.pending[index].phase = phase
        }
    }

    /// `id` settled; `refused` is its outbox entry when the server refused it for good.
    func settled(_ id: String, refused: OutboxEntry?) {
        change { snapshot in
            snapshot.pending.removeAll { $0.id == id }
            if let refused { snapshot.failed.append(refused) }
        }
    }

    /// The snapshot after `version`: at once when there is one, else when the next change comes; nil when the task is
    /// cancelled.
    func next(after version: UInt64) async -> (UInt64, MutationsSnapshot)? {
        let reader = state.withLock { state -> UInt64 in
            state.nextReader &+= 1
            return state.nextReader
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> (UInt64, MutationsSnapshot)?? in
                    if Task.isCancelled { return .some(nil) }
                    if state.version > version { return .some((state.version, state.snapshot)) }
                    state.readers[reader] = (version, continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiting = state.withLock { $0.readers.removeValue(forKey: reader) }
            waiting?.continuation.resume(returning: nil)
        }
    }
}

/// ``Service/mutations``: the current snapshot at once, then the latest after each change — a reader that falls
/// behind skips to the newest, so it never holds more than one. Ends when the iterating task is cancelled.
public struct MutationSnapshots: AsyncSequence, Sendable {
    public typealias Element = MutationsSnapshot

    let tracker: MutationTracker

    /// Makes an iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(tracker: tracker)
    }

    /// Hands out the latest snapshot, once per change it has not seen.
    public struct Iterator: AsyncIteratorProtocol {
        let tracker: MutationTracker
        var seen: UInt64?

        /// The current snapshot first; then the latest once it changes; nil once the task is cancelled.
        public mutating func next() async -> MutationsSnapshot? {
            guard let seen else {
                let (version, snapshot) = tracker.latest
                self.seen = version
                return Task.isCancelled ? nil : snapshot
            }
            guard let (version, snapshot) = await tracker.next(after: seen) else { return nil }
            self.seen = version
            return snapshot
        }
    }
}
