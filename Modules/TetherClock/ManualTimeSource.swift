import TetherConcurrency

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A clock that moves only when told: ``advance(by:)`` moves ``now`` and ``elapsed`` and wakes every sleeper whose
/// time has come, in order; ``stepWallClock(by:)`` moves ``now`` alone, either way, as NTP or a user does. Expiry
/// timelines and delayed replies become deterministic.
///
/// ```swift
/// let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))
/// let service = Service(baseURL: "https://api.example.com", transport: transport, timeSource: clock)
/// clock.advance(by: .seconds(10))
/// ```
public final class ManualTimeSource: TimeSource {
    struct Sleeper {
        let id: UInt64
        /// On the monotonic clock, as a real sleep is: a step of the wall clock does not move it.
        let deadline: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }

    struct State {
        var now: Date
        var elapsed = Duration.zero
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        /// Sleeps begun but not yet registered, and those of them cancelled meanwhile.
        var unregistered: Set<UInt64> = []
        var cancelled: Set<UInt64> = []

        /// Removes the sleepers due by ``elapsed`` and returns them, earliest first, to be resumed outside the lock.
        mutating func takeDue() -> [Sleeper] {
            let elapsed = elapsed
            let due = sleepers.filter { $0.deadline <= elapsed }.sorted { $0.deadline < $1.deadline }
            sleepers.removeAll { $0.deadline <= elapsed }
            return due
        }
    }

    private let state: LockedValue<State>

    /// Makes a clock that reads `now` until advanced. Defaults to 1970-01-01 00:16:40 UTC (t = 1000 s).
    public init(now: Date = Date(timeIntervalSince1970: 1000)) {
        state = LockedValue(State(now: now))
    }

    /// The clock's time.
    public var now: Date {
        state.withLock { $0.now }
    }

    /// The clock's monotonic time: moved by ``advance(by:)`` and ``set(to:)``, not by ``stepWallClock(by:)``.
    public var elapsed: Duration {
        state.withLock { $0.elapsed }
    }

    /// Steps the wall clock by `duration` — backwards when negative — leaving ``elapsed`` and every sleeper where
    /// they are: what NTP or a user changing the time does to a running process.
    public func stepWallClock(by duration: Duration) {
        state.withLock { $0.now = $0.now.addingTimeInterval(duration.timeInterval) }
    }

    /// How many tasks are sleeping on this clock right now.
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// Moves the clock forward by `duration` — ``elapsed`` by exactly that much — and resumes every sleeper due by
    /// then, earliest first.
    public func advance(by duration: Duration) {
        guard duration > .zero else { return resumeDue() }
        // `elapsed` moves by the duration itself: through a `Date` (whose resolution near 1970 is about 0.1 µs),
        // fifty steps of 20 ms would fall short of one second, and a sleeper due at 20 ms would need two steps.
        let due = state.withLock { state -> [Sleeper] in
            state.elapsed += duration
            state.now = state.now.addingTimeInterval(duration.timeInterval)
            return state.takeDue()
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Sets the clock to `date` (never backwards: an earlier date is ignored; see ``stepWallClock(by:)``), moving
    /// ``elapsed`` as much, and resumes every sleeper due by then.
    public func set(to date: Date) {
        let due = state.withLock { state -> [Sleeper] in
            if date > state.now {
                state.elapsed += .nanoseconds(Int64((date.timeIntervalSince(state.now) * 1e9).rounded()))
                state.now = date
            }
            return state.takeDue()
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    private func resumeDue() {
        let due = state.withLock { $0.takeDue() }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Suspends until the clock has been advanced by `duration`; throws `CancellationError` if the task is
    /// cancelled first.
    public func sleep(for duration: Duration) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.unregistered.insert(state.nextID)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    state.unregistered.remove(id)
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    let deadline = state.elapsed + duration
                    if deadline <= state.elapsed { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    // Not registered yet: fail it when it registers. (Already woken: nothing to do.)
                    if state.unregistered.contains(id) { state.cancelled.insert(id) }
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Waits (yielding, not sleeping) until at least `count` tasks sleep on this clock, so that a test can advance
    /// the clock knowing who will wake. Gives up after `attempts` yields and returns false.
    @discardableResult
    public func waitForSleepers(_ count: Int = 1, attempts: Int = 100_000) async -> Bool {
        for _ in 0..<attempts {
            if sleeperCount >= count { return true }
            await Task.yield()
        }
        return sleeperCount >= count
    }
}
