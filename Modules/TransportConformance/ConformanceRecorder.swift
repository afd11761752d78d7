public import Foundation
import TetherConcurrency

/// What the conformance hosts saw: requests per path, attempts per `/flaky` and `/sequence` key, and connections opened and closed on the misbehaving
/// peer — the server's side of the story, which the checks compare with the transport's.
public final class ConformanceRecorder: Sendable {
    struct State {
        var attempts: [String: Int] = [:]
        var requests: [String: Int] = [:]
        var opened = 0
        var closed = 0
        var changes: [String: [IdempotentChange]] = [:]
    }

    /// A change `/idempotent/{name}` received: its idempotency key, its body, and how many requests carried it.
    public struct IdempotentChange: Sendable, Hashable {
        /// The `Idempotency-Key`.
        public let key: String
        /// The body of the first request with the key: what was applied.
        public let body: Data
        /// How many requests carried the key (1: applied once; more: answered again without applying).
        public var deliveries: Int
    }

    private let state = LockedValue(State())

    /// Makes an empty recorder.
    public init() {}

    /// How many requests reached `/flaky/{key}/…`.
    public func attempts(for key: String) -> Int {
        state.withLock { $0.attempts[key, default: 0] }
    }

    /// How many requests reached `path` (without its query), on any host serving these endpoints.
    public func requests(to path: String) -> Int {
        state.withLock { $0.requests[path, default: 0] }
    }

    /// The changes `/idempotent/{name}` applied, in the order their keys first arrived: each key once.
    public func changes(to name: String) -> [IdempotentChange] {
        state.withLock { $0.changes[name, default: []] }
    }

    /// Connections the misbehaving peer has accepted.
    public var connectionsOpened: Int { state.withLock { $0.opened } }

    /// Connections the misbehaving peer has seen closed, by either side.
    public var connectionsClosed: Int { state.withLock { $0.closed } }

    func recordAttempt(_ key: String) -> Int {
        state.withLock { state in
            state.attempts[key, default: 0] += 1
            return state.attempts[key, default: 0]
        }
    }

    /// Records a change to `name` under `key`; true when it is new (to be applied), false for a key seen before.
    func recordChange(_ name: String, key: String, body: Data) -> Bool {
        state.withLock { state in
            if let index = state.changes[name]?.firstIndex(where: { $0.key == key }) {
                state.changes[name]?[index].deliveries += 1
                return false
            }
            state.changes[name, default: []].append(IdempotentChange(key: key, body: body, deliveries: 1))
            return true
        }
    }

    func recordRequest(_ path: String) { state.withLock { $0.requests[path, default: 0] += 1 } }
    func recordOpened() { state.withLock { $0.opened += 1 } }
    func recordClosed() { state.withLock { $0.closed += 1 } }
}
