import TetherConcurrency

/// Suspends until the current task is cancelled (at once, if it already is).
func waitForCancellation() async {
    let cancelled = OneShot<Void>()
    await withTaskCancellationHandler {
        await cancelled.wait()
    } onCancel: {
        cancelled.fire()
    }
}
