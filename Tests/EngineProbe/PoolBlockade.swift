import Foundation
import TetherConcurrency
import TetherTesting

/// Holds every thread of Swift concurrency's cooperative pool (one per core) with a task that blocks, until released
/// or for 30 s at most: what an application's blocking call or long computation does to the pool.
///
/// In a process of its own, where nothing else queues on the pool, each blocking task gets a thread at once. Whether
/// the pool is really full is checked, not assumed: a canary task started while the blockade holds must run only once
/// it is released (``canaryRanWhileHolding``).
final class PoolBlockade: Sendable {
    private struct State {
        /// Blocking tasks on a thread now.
        var arrived = 0
        var isReleased = false
        /// What the canary saw when it ran: nil until then.
        var canarySawRelease: Bool?
    }

    let width = ProcessInfo.processInfo.activeProcessorCount
    private let state = LockedValue(State())
    private let gate = DispatchSemaphore(value: 0)

    /// Returns once a blocking task holds each of the pool's threads, then starts the canary. Call it off the pool
    /// (from a task that prefers a `DispatchQueueExecutor`).
    func hold() async throws {
        for _ in 0..<width {
            Task.detached { [self] in
                state.withLock { $0.arrived += 1 }
                // Blocking on purpose: this task's job is to hold the thread.
                _ = gate.wait(timeout: .now() + 30)
                state.withLock { $0.arrived -= 1 }
            }
        }
        try await eventually(within: .seconds(30)) { self.isHolding }
        Task.detached { [state] in
            state.withLock { $0.canarySawRelease = $0.isReleased }
        }
    }

    /// Whether every blocking task holds its thread now.
    var isHolding: Bool { state.withLock { !$0.isReleased && $0.arrived == width } }

    /// Lets the blocking tasks return; once only.
    func release() {
        let first = state.withLock { state in
            defer { state.isReleased = true }
            return !state.isReleased
        }
        guard first else { return }
        for _ in 0..<width { gate.signal() }
    }

    /// After ``release()``: waits for the canary, and says whether it ran before the release — a thread of the pool
    /// was free all along, and what ran meanwhile proves nothing.
    func canaryRanWhileHolding() async throws -> Bool {
        try await eventually(within: .seconds(30)) { self.state.withLock { $0.canarySawRelease != nil } }
        return state.withLock { $0.canarySawRelease == false }
    }
}
