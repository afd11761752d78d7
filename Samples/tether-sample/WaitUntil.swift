/// Polls `condition` every 5 ms until it holds or `timeout` passes: for what another process or the demo server does,
/// which sends no event this process could await. Throws only when the task is cancelled.
func waitUntil(timeout: Duration, _ condition: () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !condition(), clock.now < deadline {
        try await clock.sleep(for: .milliseconds(5))
    }
}
