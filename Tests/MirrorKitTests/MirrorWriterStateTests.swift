import Testing

@testable import MirrorKit

/// The writer's pure state machine: one write at a time, the newest waiting, an offer the waiting work covers dropped.
@Suite("The mirror's writer state machine")
struct MirrorWriterStateTests {
    @Test("A newer offer replaces the one waiting, unless the waiting one covers it; waiters resume once, when idle")
    func latestOnly() {
        var state = MirrorWriterState<String, Int>()
        guard case .startWriting("a") = state.offer("a") else {
            Issue.record("the first offer starts a writer")
            return
        }
        guard case .none = state.offer("b") else {
            Issue.record("a second offer waits")
            return
        }
        let waiting = state.wait(1)
        #expect(waiting, "a waiter waits while a write runs")
        // "c" replaces "b"; "confirm" is covered by the data waiting, so "c" stays.
        _ = state.offer("c")
        _ = state.offer("confirm", isCoveredBy: { $0 == "c" })
        guard case .write("c") = state.finished() else {
            Issue.record("the newest data is written next, not the covered confirmation")
            return
        }
        guard case .stop(let waiters) = state.finished() else {
            Issue.record("nothing waits after the last write")
            return
        }
        #expect(waiters == [1])
        let idle = !state.wait(2)
        #expect(idle, "an idle writer makes nobody wait")
    }
}
