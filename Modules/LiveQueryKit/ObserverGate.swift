import TetherConcurrency

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Stands between a lane and an observer's handler: computes each event against the last snapshot this observer
/// received, refuses to call a stopped observer, and lets ``stop()`` wait for a handler running on another thread —
/// so that no handler runs after `stop()` returns (a handler that stops its own query is not waited for).
final class ObserverGate: Sendable {
    struct State: Sendable {
        var stopped = false
        var running: [UInt] = []
        var lastDelivered: [Document]?
    }

    let state = LockedValue(State())

    /// Begins a call: the event for `documents`, or nil when the observer is stopped.
    func enter(with documents: [Document]) -> LiveQueryEvent? {
        state.withLock { state -> LiveQueryEvent? in
            guard !state.stopped else { return nil }
            state.running.append(Self.currentThread())
            defer { state.lastDelivered = documents }
            guard let last = state.lastDelivered else { return .initial }
            return .update(LiveQueryUpdate(from: last, to: documents))
        }
    }

    /// Ends a call begun by ``enter(with:)``.
    func exit() {
        let me = Self.currentThread()
        state.withLock { state in
            if let index = state.running.firstIndex(of: me) { state.running.remove(at: index) }
        }
    }

    /// Stops calls; returns once no handler is running on another thread. Releases the last snapshot.
    func stop() {
        let me = Self.currentThread()
        let released = state.withLock { state -> [Document]? in
            state.stopped = true
            return state.lastDelivered.take()
        }
        _ = consume released
        while state.withLock({ $0.running.contains { $0 != me } }) { usleep(50) }
    }

    var isStopped: Bool {
        state.withLock { $0.stopped }
    }

    /// The calling thread, as a number.
    static func currentThread() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
