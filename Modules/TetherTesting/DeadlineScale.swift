/// How much longer than written the tests' correctness deadlines are: `TETHER_DEADLINE_SCALE` (a whole number, 1 to
/// 100), 1 when unset.
///
/// A deadline in a test bounds a hang, not a speed: it is written for a debug build on a loaded 2-core machine. Under
/// ThreadSanitizer the same code runs 5–20 times slower, and the CI stage that runs it sets the scale, so that a test
/// is failed there for what it does wrong, not for the instrumentation's cost. ``eventually(within:file:line:_:)``,
/// ``blockUntil(within:file:line:_:)``, ``ProbeProcess/finish(within:)`` and the time-limit trait
/// `.timeLimit(minutes:)` (TetherTestingTraits) apply it.
///
/// ```swift
/// try await eventually(within: .seconds(10)) { recorder.count == 3 }   // 40 s under TETHER_DEADLINE_SCALE=4
/// ```
public enum DeadlineScale {
    /// The setting: `TETHER_DEADLINE_SCALE`, 1 to 100, 1 when unset.
    public static let setting = TestSetting(variable: "TETHER_DEADLINE_SCALE", range: 1...100, default: 1)

    /// The factor in force. A bad value is reported once, on standard error, and 1 is used: a mistyped value leaves
    /// the deadlines as written, and says so.
    public static let factor = setting.value()

    /// `deadline` times ``factor``.
    public static func scaled(_ deadline: Duration) -> Duration {
        deadline * factor
    }
}
