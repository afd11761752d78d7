import TetherConcurrency

/// What the conformance hosts saw: requests per path, attempts per `/flaky` and `/sequence` key, and connections opened and closed on the misbehaving
/// peer — the server's side of the story, which the checks compare with the transport's.
public final class ConformanceRecorder: Sendable {
    struct State {
        var attempts: [String: Int] = [:]
        var requests: [String: Int] = [:]
        var opened = 0
        var closed = 0
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

    func recordRequest(_ path: String) { state.withLock { $0.requests[path, default: 0] += 1 } }
    func recordOpened() { state.withLock { $0.opened += 1 } }
    func recordClosed() { state.withLock { $0.closed += 1 } }
}
