import Foundation
import Testing
import TetherTesting

@Suite("DeadlineScale: TETHER_DEADLINE_SCALE lengthens the tests' deadlines, and a bad value is refused by name")
struct DeadlineScaleTests {
    @Test("Unset is 1; a whole number from 1 to 100 is taken, spaces around it too")
    func accepted() throws {
        #expect(try DeadlineScale.parse(nil).get() == 1)
        #expect(try DeadlineScale.parse("1").get() == 1)
        #expect(try DeadlineScale.parse(" 4 ").get() == 4)
        #expect(try DeadlineScale.parse("100").get() == 100)
    }

    @Test(
        "A value that is not a whole number from 1 to 100 is an error naming the variable and the value",
        arguments: [
            "", "0", "-2", "101", "2.5", "four",
        ])
    func refused(value: String) {
        let result = DeadlineScale.parse(value)
        #expect(throws: DeadlineScaleError(value: value)) { try result.get() }
        #expect(
            "\(DeadlineScaleError(value: value))"
                == "TETHER_DEADLINE_SCALE=\"\(value)\" is not a whole number from 1 to 100")
    }

    @Test("The factor in force is this process's variable, and a deadline is scaled by it")
    func inForce() throws {
        let value = ProcessInfo.processInfo.environment[DeadlineScale.variable]
        let expected = (try? DeadlineScale.parse(value).get()) ?? 1
        #expect(DeadlineScale.factor == expected)
        #expect(DeadlineScale.scaled(.seconds(30)) == .seconds(30 * expected))
    }

    @Test("A wait that times out says the deadline as written, and the factor when it is not 1")
    func timedOutMessage() async {
        let error = await #expect(throws: EventuallyTimedOut.self) {
            try await eventually(within: .milliseconds(20)) { false }
        }
        let description = error.map { "\($0)" } ?? ""
        #expect(description.contains("the condition did not hold within 0.02 seconds"), "\(description)")
        #expect(description.contains(DeadlineScale.variable) == (DeadlineScale.factor != 1), "\(description)")
    }
}
