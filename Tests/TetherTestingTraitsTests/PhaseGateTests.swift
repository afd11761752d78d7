import Foundation
import Testing
import TetherConcurrency
import TetherTesting

@testable import TetherTestingTraits

@Suite("PhaseGate and the processor-share trait: two kinds of test never overlap")
struct PhaseGateTests {
    enum Kind: Hashable, Sendable { case a, b }

    @Test("Work of one kind runs together; the other kind waits for the last of it, then all of its own go at once")
    func turns() async {
        let gate = PhaseGate<Kind>()
        await gate.enter(.a)
        await gate.enter(.a)  // admitted beside the first: nobody of the other kind waits
        let admittedB = LockedValue(0)
        let waiters = (0..<2).map { _ in
            Task {
                await gate.enter(.b)
                admittedB.withLock { $0 += 1 }
            }
        }
        while gate.waitingCount < 2 { await Task.yield() }
        gate.leave(.a)
        #expect(gate.waitingCount == 2, "one of .a still runs")
        #expect(admittedB.withLock { $0 } == 0)
        gate.leave(.a)
        for waiter in waiters { await waiter.value }
        #expect(admittedB.withLock { $0 } == 2)
        gate.leave(.b)
        gate.leave(.b)
        await gate.enter(.a)  // idle again: admitted at once
        gate.leave(.a)
    }

    @Test("Once the other kind waits, no more of the running kind are let in ahead of it")
    func noStarvation() async {
        let gate = PhaseGate<Kind>()
        await gate.enter(.a)
        let order = LockedValue<[String]>([])
        let b = Task {
            await gate.enter(.b)
            order.withLock { $0.append("b") }
            gate.leave(.b)
        }
        while gate.waitingCount < 1 { await Task.yield() }
        let laterA = Task {
            await gate.enter(.a)
            order.withLock { $0.append("later a") }
            gate.leave(.a)
        }
        while gate.waitingCount < 2 { await Task.yield() }
        gate.leave(.a)
        await b.value
        await laterA.value
        #expect(order.withLock { $0 } == ["b", "later a"])
    }

    @Test("Many of both kinds entering and leaving at random: never both at once, every one admitted")
    func randomised() async {
        let gate = PhaseGate<Kind>()
        let inside = LockedValue<[Kind: Int]>([:])
        let overlaps = LockedValue(0)
        let done = LockedValue(0)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                let kind: Kind = Bool.random() ? .a : .b
                group.addTask {
                    await gate.enter(kind)
                    inside.withLock { counts in
                        counts[kind, default: 0] += 1
                        if counts[kind == .a ? .b : .a, default: 0] > 0 { overlaps.withLock { $0 += 1 } }
                    }
                    for _ in 0..<(index % 4) { await Task.yield() }
                    inside.withLock { $0[kind, default: 0] -= 1 }
                    gate.leave(kind)
                    done.withLock { $0 += 1 }
                }
            }
        }
        #expect(overlaps.withLock { $0 } == 0)
        #expect(done.withLock { $0 } == 400)
        #expect(gate.waitingCount == 0)
    }
}

@Suite("The processor-share trait on a suite and on its tests", .loadsEveryCore)
struct ProcessorShareTraitTests {
    @Test(
        "The trait twice over takes one turn; the current turn is visible to the test", .loadsEveryCore,
        arguments: 0..<4)
    func nested(_ index: Int) {
        #expect(ProcessorShareTrait.current == .loadsEveryCore)
    }

    @Test("The other kind inside a turn runs under the outer turn instead of waiting for itself", .needsProcessorTime)
    func otherKindInside() {
        #expect(ProcessorShareTrait.current == .loadsEveryCore)
    }

    @Test(
        "Tests holding up one resource run one at a time, the same one nested is taken once, another runs beside them",
        .timeLimit(minutes: 1))
    func heldUpInTurns() async throws {
        let test = try #require(Test.current)
        let resource = SharedResource("a resource of \(test.name) \(UUID())")
        let other = SharedResource("another resource of \(test.name) \(UUID())")
        let events = LockedValue<[String]>([])
        let record: @Sendable (String) -> Void = { event in events.withLock { $0.append(event) } }
        let latch = AsyncSlots(count: 0)
        let first = Task {
            try await ProcessorShareTrait.holdsUp(resource).provideScope(for: test, testCase: nil) {
                record("first in")
                // Nested, as on a suite and on its test: it would wait for itself if it took the resource again.
                try await ProcessorShareTrait.holdsUp(resource).provideScope(for: test, testCase: nil) {
                    record("nested")
                }
                await latch.acquire()
                record("first out")
            }
        }
        try await eventually(within: .seconds(30)) { events.withLock { $0 } == ["first in", "nested"] }
        let second = Task {
            try await ProcessorShareTrait.holdsUp(resource).provideScope(for: test, testCase: nil) {
                record("second in")
            }
        }
        let slot = try #require(ProcessorShareTrait.slots.withLock { $0[resource] })
        try await eventually(within: .seconds(30)) { slot.waitingCount == 1 }
        // Another resource is not held up by the first: this returns while the first still holds its own.
        try await ProcessorShareTrait.holdsUp(other).provideScope(for: test, testCase: nil) {
            record("another")
        }
        #expect(events.withLock { $0 } == ["first in", "nested", "another"])
        latch.release()
        try await first.value
        try await second.value
        #expect(events.withLock { $0 } == ["first in", "nested", "another", "first out", "second in"])
    }

    @Test(
        "The turn is taken around a test function's cases, where Swift Testing's time limit does not count the wait",
        arguments: 0..<2)
    func turnOutsideTheTimeLimit(_ index: Int) throws {
        let test = try #require(Test.current)
        let trait = ProcessorShareTrait.needsProcessorTime
        #expect(trait.scopeProvider(for: test, testCase: nil) != nil)
        #expect(trait.scopeProvider(for: test, testCase: Test.Case.current) == nil)
    }
}
