/// Lets the first warning of a kind through, then at most one per interval, each saying how many like it were held
/// back since: a cache on a full disk fails every operation, and one line per failure (21,000 a minute, measured)
/// would bury everything else in the log.
struct WarningThrottle: Sendable {
    private struct Run: Sendable {
        var lastLogged: ContinuousClock.Instant
        var heldBack: Int
    }

    /// The shortest time between two warnings of one kind.
    let interval: Duration
    private var runs: [String: Run] = [:]

    init(interval: Duration) {
        self.interval = interval
    }

    /// Whether a warning of `kind` may be logged `now`: nil when it is held back, else how many of its kind were
    /// held back since the last one logged.
    mutating func admit(_ kind: String, now: ContinuousClock.Instant) -> Int? {
        guard var run = runs[kind] else {
            runs[kind] = Run(lastLogged: now, heldBack: 0)
            return 0
        }
        guard now - run.lastLogged >= interval else {
            run.heldBack += 1
            runs[kind] = run
            return nil
        }
        runs[kind] = Run(lastLogged: now, heldBack: 0)
        return run.heldBack
    }
}
