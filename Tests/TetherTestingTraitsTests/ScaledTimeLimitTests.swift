import Testing
import TetherTesting
import TetherTestingTraits

@Suite("The scaled time limit: .timeLimit(minutes:) is Swift Testing's, times the deadline scale")
struct ScaledTimeLimitTests {
    @Test("Two minutes as written are 2 × DeadlineScale.factor minutes")
    func scaled() {
        let trait: TimeLimitTrait = .timeLimit(minutes: 2)
        #expect(trait.timeLimit == .seconds(120 * DeadlineScale.factor))
    }
}
