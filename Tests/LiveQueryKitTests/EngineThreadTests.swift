import LiveQueryKit
import Testing
import TetherTesting
import TetherTestingTraits

/// The engine runs on a queue of its own, not on Swift concurrency's cooperative pool: with every thread of the pool
/// held by someone else's work, a live query still gets its first result and its updates.
///
/// The check runs in a process of its own (`tether-engine-probe`, which says how): held in this one, the pool would
/// hold up every other test for as long as the engine took, and under ThreadSanitizer the tests beside it missed
/// their deadlines (a shared token refresh did not reach 10 requests in 30 s), as did this one its blockade.
@Suite("Live queries: the engine's own thread", .serialized, .needsProcessorTime, .timeLimit(minutes: 3))
struct EngineThreadTests {
    @Test(
        "With every thread of Swift concurrency's pool blocked, a live query's first result and its update arrive",
        arguments: TestStores.kinds)
    func poolHeld(kind: String) async throws {
        try await TemporaryDirectory.with { directory in
            let probe = try await ProbeProcess.run(
                executable: "tether-engine-probe", ["pool-held", kind, directory.path], in: directory)
            #expect(probe.status == 0, "\(probe)")
            #expect(probe.lines.first?.hasPrefix("holding ") == true, "\(probe)")
            #expect(Array(probe.lines.dropFirst()) == ["result a", "result a,b", "done"], "\(probe)")
        }
    }
}
