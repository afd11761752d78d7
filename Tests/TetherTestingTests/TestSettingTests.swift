import Foundation
import Testing
import TetherTesting

@Suite("TestSetting: numbers a test run reads from the environment, a bad one refused by name; DeadlineScale")
struct TestSettingTests {
    static let setting = TestSetting(variable: "TETHER_EXAMPLE", range: 1...100, default: 7)

    @Test("Unset is the default; a whole number in the range is taken, spaces around it too")
    func accepted() throws {
        #expect(try Self.setting.parse(nil).get() == 7)
        #expect(try Self.setting.parse("1").get() == 1)
        #expect(try Self.setting.parse(" 4 ").get() == 4)
        #expect(try Self.setting.parse("100").get() == 100)
        #expect(Self.setting.value(in: [:]) == 7)
        #expect(Self.setting.value(in: ["TETHER_EXAMPLE": "12"]) == 12)
    }

    @Test(
        "A value that is not a whole number in the range is an error naming the variable and the value; the default is used",
        arguments: ["", "0", "-2", "101", "2.5", "four"])
    func refused(value: String) {
        let error = TestSettingError(setting: Self.setting, value: value)
        #expect(throws: error) { try Self.setting.parse(value).get() }
        #expect("\(error)" == "TETHER_EXAMPLE=\"\(value)\" is not a whole number from 1 to 100")
        #expect(Self.setting.value(in: ["TETHER_EXAMPLE": value]) == 7)
    }

    @Test("The deadline scale in force is this process's TETHER_DEADLINE_SCALE, and a deadline is scaled by it")
    func deadlineScale() {
        let expected = DeadlineScale.setting.value()
        #expect(DeadlineScale.setting.variable == "TETHER_DEADLINE_SCALE")
        #expect(DeadlineScale.factor == expected)
        #expect(DeadlineScale.scaled(.seconds(30)) == .seconds(30 * expected))
    }

    @Test("The stress settings: TETHER_STRESS_SECONDS (0 turns the churn off) and TETHER_STRESS_OPS over a default")
    func stressLoad() throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = TestSetting(variable: "TETHER_STRESS_SECONDS", range: 0...3_600, default: 20)
        #expect(StressLoad.churnSeconds == seconds.value(in: environment))
        #expect(try seconds.parse("0").get() == 0)
        let operations = TestSetting(variable: "TETHER_STRESS_OPS", range: 1...100_000_000, default: 1_234)
        #expect(StressLoad.operationsPerThread(default: 1_234) == operations.value(in: environment))
        #expect(operations.value(in: [:]) == 1_234)
    }

    @Test("A wait that times out says the deadline as written, and the factor when it is not 1")
    func timedOutMessage() async {
        let error = await #expect(throws: EventuallyTimedOut.self) {
            try await eventually(within: .milliseconds(20)) { false }
        }
        let description = error.map { "\($0)" } ?? ""
        #expect(description.contains("the condition did not hold within 0.02 seconds"), "\(description)")
        #expect(description.contains("TETHER_DEADLINE_SCALE") == (DeadlineScale.factor != 1), "\(description)")
    }
}
