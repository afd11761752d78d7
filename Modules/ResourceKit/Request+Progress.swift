import TetherClock
import TetherConcurrency
import TransportKit

/// A request's progress: the last value reported, when, and the reports waiting to be handed to callbacks.
struct RequestProgressState: Sendable {
    /// The last value reported (0 before any).
    var value: Double = 0
    /// When, on the time source's monotonic clock, the last intermediate value was reported.
    var reportedAt: Duration?
    var queue: [Double] = []
    var drainer = Drainer()
    var callbacks: [@Sendable (Double) -> Void] = []

    /// Whether anything listens: without, reports only record the value.
    var isObserved: Bool { !callbacks.isEmpty }
}

extension Request {
    /// How far the request has got, from 0 to 1: sending the body (the first half, when there is one), then
    /// receiving the response. Exactly 1 once it has completed — however it ended.
    public var progress: Double {
        state.withLock { $0.progress.value }
    }

    /// Calls `callback` with the progress as it grows: at most once per reporting interval
    /// (``ResourceConfiguration/progressReportingInterval``, 50 ms by default), always increasing, and last with
    /// exactly 1, before the request's completion callbacks run. Added after completion, it is called with 1 at
    /// once. Runs on the thread that reports (the transport's, or the one completing the request).
    @discardableResult
    public func onProgress(_ callback: @escaping @Sendable (Double) -> Void) -> Request {
        let done = state.withLock { state -> Bool in
            guard !state.isClaimed else { return true }
            state.progress.callbacks.append(callback)
            return false
        }
        if done { callback(1) }
        return self
    }

    /// Records what the transport reports; hands the fraction on if it grew and the interval has passed since the
    /// last report.
    func transportProgressed(_ counts: TransportProgress) {
        report(counts.fractionCompleted)
    }

    /// An intermediate value: ignored once completion has begun, when it does not grow, or within the interval;
    /// values of 1 and more wait for completion, which reports exactly 1.
    func report(_ value: Double) {
        let now = timeSource.elapsed
        let claimed = state.withLock { state -> Bool in
            guard !state.isClaimed, value < 1, value > state.progress.value else { return false }
            if let last = state.progress.reportedAt, now - last < progressInterval { return false }
            state.progress.value = value
            state.progress.reportedAt = now
            guard state.progress.isObserved else { return false }
            state.progress.queue.append(value)
            return state.progress.drainer.claim()
        }
        if claimed { drainProgress() }
    }

    /// Under completion, before anything else: reports exactly 1, after every value still waiting.
    func finishProgress() {
        let claimed = state.withLock { state -> Bool in
            state.progress.value = 1
            guard state.progress.isObserved else { return false }
            state.progress.queue.append(1)
            return state.progress.drainer.claim()
        }
        if claimed { drainProgress() }
    }

    private func drainProgress() {
        state.drain(
            \.progress.drainer,
            next: { state -> (Double, [@Sendable (Double) -> Void])? in
                guard !state.progress.queue.isEmpty else { return nil }
                let value = state.progress.queue.removeFirst()
                let callbacks = state.progress.callbacks
                if value >= 1 { state.progress.callbacks = [] }
                return (value, callbacks)
            },
            handle: { value, callbacks in
                for callback in callbacks { callback(value) }
            })
    }
}
