import Foundation
import Synchronization

/// How a connection waits for a lock another connection holds — another process writing the same file: SQLite's busy
/// handler for every connection of one store. It sleeps a little and tries again until the busy timeout has passed,
/// and gives up at once when the store is closing, so that a stop (SIGTERM) never waits out a long timeout: the write
/// that waited fails, and the store closes.
package final class BusyWait: Sendable {
    /// How long one wait may last before SQLite reports the file busy.
    let timeout: Duration
    private let isStopping = Atomic<Bool>(false)
    /// Waits begun so far (an attempt numbered 0): for tests, which wait for a writer to be waiting.
    private let waitsBegun = Atomic<Int>(0)

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// The longest sleep between two tries: how soon a stop is noticed.
    static let longestSleep = Duration.milliseconds(10)

    /// SQLite's busy handler. `attempt` counts the earlier calls for this wait (0 first); returns whether to try
    /// again, after a sleep of 1, 2, 4, 8, then 10 ms each.
    func shouldRetry(attempt: Int) -> Bool {
        if attempt == 0 { waitsBegun.add(1, ordering: .relaxed) }
        guard !isStopping.load(ordering: .acquiring), Self.slept(before: attempt) < timeout else { return false }
        let sleep = Self.sleep(at: attempt)
        usleep(UInt32(sleep / .microseconds(1)))
        return true
    }

    /// From now on every wait gives up: the one under way at its next try, within ``longestSleep``.
    func stop() {
        isStopping.store(true, ordering: .releasing)
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool {
        isStopping.load(ordering: .acquiring)
    }

    /// Waits begun so far.
    package var waits: Int {
        waitsBegun.load(ordering: .relaxed)
    }

    /// The sleep after try `attempt`.
    static func sleep(at attempt: Int) -> Duration {
        attempt < 4 ? .milliseconds(1 << attempt) : longestSleep
    }

    /// The time slept before try `attempt`: 1 + 2 + 4 + 8 ms, then 10 ms a try.
    static func slept(before attempt: Int) -> Duration {
        attempt <= 4 ? .milliseconds((1 << attempt) - 1) : .milliseconds(15) + longestSleep * (attempt - 4)
    }
}
