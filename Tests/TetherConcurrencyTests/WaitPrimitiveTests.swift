import Foundation
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits

/// A thread-safe list of what happened, in order.
final class Events: Sendable {
    let all = LockedValue<[String]>([])
    func append(_ event: String) { all.withLock { $0.append(event) } }
    var list: [String] { all.withLock { $0 } }
}

@Suite("CallGate and Watermark: waits on a condition, never polls", .onDedicatedThread)
struct WaitPrimitiveTests {
    @Test("A closed gate admits no call; close() reports the first close only and never waits")
    func closeRefusesCalls() {
        let gate = CallGate()
        #expect(gate.enter())
        #expect(gate.close(), "the first close")
        #expect(!gate.close(), "a second close")
        #expect(!gate.enter(), "no call begins once closed")
        #expect(gate.runningCalls == 1, "the call begun before the close still runs")
        gate.exit()
        #expect(gate.runningCalls == 0)
    }

    @Test("waitForCalls() blocks until the running call exits; a caller's own call is excluded")
    func blockingWait() throws {
        let gate = CallGate()
        #expect(gate.enter())
        gate.close()
        gate.waitForCalls(excluding: 1)  // the caller's own call: returns at once
        let events = Events()
        let finished = DispatchSemaphore(value: 0)
        Thread {
            events.append("waiting")
            gate.waitForCalls()
            events.append("returned")
            finished.signal()
        }.start()
        try blockUntil { events.list == ["waiting"] }
        events.append("call exits")
        gate.exit()
        finished.wait()
        #expect(events.list == ["waiting", "call exits", "returned"])
    }

    @Test("await waitForCalls() suspends until the running call exits")
    func asyncWait() async throws {
        let gate = CallGate()
        #expect(gate.enter())
        gate.close()
        let events = Events()
        let waiter = Task {
            events.append("waiting")
            await gate.waitForCalls()
            events.append("returned")
        }
        try await eventually { events.list == ["waiting"] }
        events.append("call exits")
        gate.exit()
        await waiter.value
        #expect(events.list == ["waiting", "call exits", "returned"])
    }

    @Test("A watermark wakes each waiter when its mark is reached, blocked or suspended; lower marks change nothing")
    func watermark() async throws {
        let mark = Watermark()
        let events = Events()
        let blocked = DispatchSemaphore(value: 0)
        Thread {
            mark.wait(until: 3)
            events.append("thread saw 3")
            blocked.signal()
        }.start()
        let suspended = Task {
            await mark.wait(until: 5)
            events.append("task saw 5")
        }
        mark.advance(to: 2)
        mark.advance(to: 1)
        #expect(mark.value == 2, "a lower mark changes nothing")
        mark.advance(to: 3)
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                blocked.wait()
                continuation.resume()
            }
        }
        #expect(events.list == ["thread saw 3"], "the task waits for 5")
        mark.advance(to: 5)
        await suspended.value
        #expect(events.list == ["thread saw 3", "task saw 5"])
        await mark.wait(until: 4)  // already past: returns at once
    }
}
