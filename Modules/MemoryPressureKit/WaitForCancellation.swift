import TetherConcurrency

/// Suspends until the current task is cancelled (at once, if it already is).
func waitForCancellation() async {
    let latch = CancellationLatch()
    await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            latch.wait(continuation)
        }
    } onCancel: {
        latch.open()
    }
}

/// Resumes a waiter once opened, whichever comes first.
final class CancellationLatch: Sendable {
    private struct State: Sendable {
        var isOpen = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = LockedValue(State())

    func wait(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = state.withLock { state -> Bool in
            if state.isOpen { return true }
            state.waiter = continuation
            return false
        }
        if resumeNow { continuation.resume() }
    }

    func open() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.isOpen = true
            return state.waiter.take()
        }
        waiter?.resume()
    }
}
