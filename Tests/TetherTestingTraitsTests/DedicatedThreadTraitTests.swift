import Testing
import TetherTestingTraits

@Suite("onDedicatedThread: tests that block stay off Swift concurrency's threads")
struct DedicatedThreadTraitTests {
    @Test("A synchronous test runs on its own thread, in its test's task", .onDedicatedThread)
    func synchronousTest() {
        #expect(DedicatedThreadTrait.isCurrent)
        #expect(Test.current?.name == "synchronousTest()", "task locals, and so issue reporting, are intact")
    }

    @Test("An async test stays on its own thread across suspensions", .onDedicatedThread)
    func asyncTest() async throws {
        #expect(DedicatedThreadTrait.isCurrent)
        try await Task.sleep(for: .milliseconds(1))
        #expect(DedicatedThreadTrait.isCurrent)
        await Task.yield()
        #expect(DedicatedThreadTrait.isCurrent)
    }

    @Test("Without the trait, a test runs on Swift concurrency's threads")
    func withoutTrait() {
        #expect(!DedicatedThreadTrait.isCurrent)
    }
}

@Suite("onDedicatedThread on a suite and on its tests", .onDedicatedThread)
struct NestedDedicatedThreadTests {
    @Test("The trait twice over takes one slot: more cases than cores all run", .onDedicatedThread, arguments: 0..<8)
    func nested(_ index: Int) {
        #expect(DedicatedThreadTrait.isCurrent)
    }
}
