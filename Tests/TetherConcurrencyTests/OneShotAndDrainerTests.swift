import Foundation
import Testing
import TetherConcurrency
import TetherTestingTraits

@Suite("OneShot")
struct OneShotTests {
    @Test("Waiters before and after the firing all get the value; only the first firing counts")
    func firesOnce() async {
        let event = OneShot<Int>()
        let early = (0..<10).map { _ in Task { await event.wait() } }
        #expect(event.value == nil)
        let first = event.fire(7)
        let second = event.fire(8)
        #expect(first)
        #expect(!second, "a second firing changes nothing")
        for task in early { #expect(await task.value == 7) }
        #expect(await event.wait() == 7, "a waiter after the firing returns at once")
        #expect(event.value == 7)
    }

    @Test("Fired from many threads at once, it resumes every waiter exactly once", .onDedicatedThread)
    func concurrentFiring() async {
        for _ in 0..<200 {
            let event = OneShot<Void>()
            let waiters = (0..<4).map { _ in Task { await event.wait() } }
            DispatchQueue.concurrentPerform(iterations: 4) { _ in event.fire() }
            for waiter in waiters { await waiter.value }
            #expect(event.hasFired)
        }
    }
}

@Suite("Drainer")
struct DrainerTests {
    struct Work: Sendable {
        var items: [Int] = []
        var drainer = Drainer()
    }

    @Test("Items offered from 8 threads are each handled once, in each thread's order, never by two at once")
    func drainsEverything() {
        let state = LockedValue(Work())
        let handled = LockedValue<[Int]>([])
        let inside = LockedValue(0)
        let overlapped = LockedValue(false)
        let perThread = 2_000
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<perThread {
                let item = thread * perThread + index
                guard
                    state.withLock({
                        $0.items.append(item)
                        return $0.drainer.claim()
                    })
                else { continue }
                state.drain(\.drainer, next: { $0.items.isEmpty ? nil : $0.items.removeFirst() }) { item in
                    if inside.withLock({
                        $0 += 1
                        return $0
                    }) > 1 {
                        overlapped.withLock { $0 = true }
                    }
                    handled.withLock { $0.append(item) }
                    inside.withLock { $0 -= 1 }
                }
            }
        }
        let all = handled.withLock { $0 }
        #expect(all.count == 8 * perThread, "nothing left behind")
        #expect(Set(all).count == all.count, "nothing handled twice")
        #expect(!overlapped.withLock { $0 }, "one drainer at a time")
        for thread in 0..<8 {
            let mine = all.filter { $0 / perThread == thread }
            #expect(mine == mine.sorted(), "thread \(thread)'s items in its order")
        }
        #expect(!state.withLock { $0.drainer.isClaimed }, "the role is given up when the work runs out")
    }

    @Test("claim(hasWork:) refuses without work, and while another holds the role")
    func claimRules() {
        var drainer = Drainer()
        let withoutWork = drainer.claim(hasWork: false)
        let first = drainer.claim()
        let whileHeld = drainer.claim()
        drainer.release()
        let afterRelease = drainer.claim()
        #expect(!withoutWork)
        #expect(first)
        #expect(!whileHeld, "held")
        #expect(afterRelease)
    }
}
