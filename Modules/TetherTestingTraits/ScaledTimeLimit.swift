public import Testing
import TetherTesting

extension Trait where Self == TimeLimitTrait {
    /// Swift Testing's `.timeLimit(.minutes(minutes))`, times `DeadlineScale.factor` (TetherTesting): a bound on a
    /// hang, written for a debug build, that the sanitizer's CI stage lengthens with `TETHER_DEADLINE_SCALE`.
    ///
    /// ```swift
    /// @Suite("Live queries: catching up", .timeLimit(minutes: 1))   // 4 minutes under TETHER_DEADLINE_SCALE=4
    /// struct CatchUpTests { … }
    /// ```
    public static func timeLimit(minutes: Int) -> Self {
        .timeLimit(.minutes(minutes * DeadlineScale.factor))
    }
}
