import Foundation

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
    /// The environment variable read.
    public static let variable = "TETHER_DEADLINE_SCALE"

    /// The factor in force. A value that is not a whole number from 1 to 100 is reported once, on standard error,
    /// and 1 is used: a mistyped value leaves the deadlines as written, and says so.
    public static let factor: Int = {
        let value = ProcessInfo.processInfo.environment[variable]
        switch parse(value) {
        case .success(let factor):
            return factor
        case .failure(let error):
            FileHandle.standardError.write(Data("\(error); the deadlines are used as written\n".utf8))
            return 1
        }
    }()

    /// `deadline` times ``factor``.
    public static func scaled(_ deadline: Duration) -> Duration {
        deadline * factor
    }

    /// Reads a value of ``variable``: nil is 1.
    public static func parse(_ value: String?) -> Result<Int, DeadlineScaleError> {
        guard let value else { return .success(1) }
        guard let factor = Int(value.trimmingCharacters(in: .whitespaces)), (1...100).contains(factor) else {
            return .failure(DeadlineScaleError(value: value))
        }
        return .success(factor)
    }
}

/// A value of `TETHER_DEADLINE_SCALE` that is not a whole number from 1 to 100.
public struct DeadlineScaleError: Error, Equatable, CustomStringConvertible {
    /// The value as it was set.
    public let value: String

    /// The error for `value`.
    public init(value: String) {
        self.value = value
    }

    /// Names the variable, the value and what is allowed.
    public var description: String {
        "\(DeadlineScale.variable)=\"\(value)\" is not a whole number from 1 to 100"
    }
}
