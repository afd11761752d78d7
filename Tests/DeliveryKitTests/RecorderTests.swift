import DeliveryKit
import Synchronization
import Testing
import TetherTestingTraits

@Suite("Recorder", .onDedicatedThread)
struct RecorderTests {
    @Test("A lane reports deliveries, coalescing, skips and how much it holds")
    func reportsCounts() {
        let recorder = CountingRecorder()
        let signal = SignalBox()
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .inline, skipIf: ==, recorder: recorder) {
            _, signalNext in signal.keep(signalNext)
        }
        lane.submit(1)  // delivered
        lane.submit(2)  // waits
        lane.submit(1)  // coalesced into the waiting one
        signal.fire()  // 1 equals the last delivered: skipped
        lane.submit(3)  // delivered
        #expect(recorder.deliveries.load(ordering: .relaxed) == 2)
        #expect(recorder.coalesced.load(ordering: .relaxed) == 1)
        #expect(recorder.skipped.load(ordering: .relaxed) == 1)
        #expect(recorder.maxHeld.load(ordering: .relaxed) == 2)
        #expect(
            lane.statistics
                == {
                    var expected = DeliveryStatistics()
                    expected.submitted = 4
                    expected.delivered = 2
                    expected.coalesced = 1
                    expected.skippedUnchanged = 1
                    expected.heldHighWater = 2
                    return expected
                }())
    }
}
