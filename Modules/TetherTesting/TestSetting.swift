import Foundation

/// A whole number a test run reads from the environment — how long the stress tests run, how much longer the
/// deadlines are — with the range it must be in and the value used when it is unset.
///
/// A value outside the range, or not a whole number, is an error (``TestSettingError``) that names the variable and the
/// value; ``value(in:)`` reports it on standard error and uses the default, so that a mistyped setting changes
/// nothing and says so.
///
/// ```swift
/// let seconds = TestSetting(variable: "TETHER_STRESS_SECONDS", range: 0...3_600, default: 20).value()
/// ```
public struct TestSetting: Sendable, Equatable {
    /// The environment variable.
    public let variable: String
    /// The values allowed.
    public let range: ClosedRange<Int>
    /// The value when the variable is unset.
    public let defaultValue: Int

    /// A setting read from `variable`.
    public init(variable: String, range: ClosedRange<Int>, default defaultValue: Int) {
        self.variable = variable
        self.range = range
        self.defaultValue = defaultValue
    }

    /// Reads `text`, the variable's value (nil when unset: the default). Spaces around the number are allowed.
    public func parse(_ text: String?) -> Result<Int, TestSettingError> {
        guard let text else { return .success(defaultValue) }
        guard let number = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(number) else {
            return .failure(TestSettingError(setting: self, value: text))
        }
        return .success(number)
    }

    /// The value in `environment` (by default this process's); a bad one is reported on standard error, and the
    /// default used.
    public func value(in environment: [String: String]? = nil) -> Int {
        switch parse((environment ?? ProcessInfo.processInfo.environment)[variable]) {
        case .success(let number):
            return number
        case .failure(let error):
            FileHandle.standardError.write(Data("\(error); \(defaultValue) is used\n".utf8))
            return defaultValue
        }
    }
}

/// A value of a ``TestSetting``'s variable that is not a whole number in its range.
public struct TestSettingError: Error, Equatable, CustomStringConvertible {
    /// The setting.
    public let setting: TestSetting
    /// The value as it was set.
    public let value: String

    /// The error for `value` of `setting`.
    public init(setting: TestSetting, value: String) {
        self.setting = setting
        self.value = value
    }

    /// Names the variable, the value and what is allowed.
    public var description: String {
        "\(setting.variable)=\"\(value)\" is not a whole number from \(setting.range.lowerBound) to "
            + "\(setting.range.upperBound)"
    }
}

/// How much work the stress tests do: the owner-churn tests' seconds, and the operations per thread of the
/// concurrency stress tests. CI's ThreadSanitizer stage makes both smaller; the debug and release stages run the
/// defaults.
public enum StressLoad {
    /// `TETHER_STRESS_SECONDS`: how long each owner-churn test churns, 0 to 3,600 s; 20 when unset, 0 turns them off.
    public static let churnSeconds = TestSetting(variable: "TETHER_STRESS_SECONDS", range: 0...3_600, default: 20)
        .value()

    /// `TETHER_STRESS_OPS`: the operations each thread of a concurrency stress test makes, 1 to 100,000,000; the
    /// test's own `default` when unset.
    public static func operationsPerThread(default defaultValue: Int) -> Int {
        TestSetting(variable: "TETHER_STRESS_OPS", range: 1...100_000_000, default: defaultValue).value()
    }
}
