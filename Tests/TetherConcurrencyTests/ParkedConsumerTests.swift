import Foundation
import Testing
import TetherConcurrency

/// `takeOrPark` / `resumeParked`: one consumer task reading a hand-over point that producers on other threads fill.
@Suite("Parked consumer")
struct ParkedConsumerTests {
    struct Inbox: Sendable {
        var items: [Int] = []
        var consumer: CheckedContinuation<Int?, Never>?
        var isClosed = false
    }

    /// Adds `item`, handing it straight to a parked consumer if there is one.
    static func offer(_ item: Int, to inbox: LockedValue<Inbox>) {
        let parked = inbox.withLock { inbox -> CheckedContinuation<Int?, Never>? in
            if let consumer = inbox.consumer.take() { return consumer }
            inbox.items.append(item)
            return nil
        }
        parked?.resume(returning: item)
    }

    @Test("10,000 items from 4 threads reach one consumer each once, each thread's in order, then the end")
    func handOver() async {
        let inbox = LockedValue(Inbox())
        let perThread = 2_500
        let consumer = Task {
            var received: [Int] = []
            while let item = await inbox.takeOrPark(
                \.consumer,
                take: { inbox -> Int?? in
                    if !inbox.items.isEmpty { return .some(inbox.items.removeFirst()) }
                    return inbox.isClosed ? .some(nil) : nil
                })
            {
                received.append(item)
            }
            return received
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: 4) { thread in
                    for index in 0..<perThread { Self.offer(thread * perThread + index, to: inbox) }
                }
                done.resume()
            }
        }
        let closedWhileParked = inbox.withLock { inbox -> Bool in
            inbox.isClosed = true
            return inbox.consumer != nil
        }
        if closedWhileParked { inbox.resumeParked(\.consumer, returning: nil) }
        let received = await consumer.value
        #expect(received.count == 4 * perThread)
        #expect(Set(received).count == received.count, "each once")
        for thread in 0..<4 {
            let mine = received.filter { $0 / perThread == thread }
            #expect(mine == mine.sorted(), "thread \(thread)'s items in order")
        }
    }

    @Test("resumeParked is a no-op with nobody parked")
    func nobodyParked() {
        let inbox = LockedValue(Inbox())
        let resumed = inbox.resumeParked(\.consumer, returning: nil)
        #expect(!resumed)
    }

    struct Slots: Sendable {
        var free = 2
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    @Test("admitOrQueue: a two-slot semaphore over 50 tasks never lets three in, and lets everyone in")
    func admissionQueue() async {
        let slots = LockedValue(Slots())
        let inside = LockedValue(0)
        let most = LockedValue(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    await slots.admitOrQueue(\.waiting) { slots in
                        guard slots.free > 0 else { return false }
                        slots.free -= 1
                        return true
                    } entry: {
                        $0
                    }
                    let now = inside.withLock {
                        $0 += 1
                        return $0
                    }
                    most.withLock { $0 = max($0, now) }
                    await Task.yield()
                    inside.withLock { $0 -= 1 }
                    let next = slots.withLock { slots -> CheckedContinuation<Void, Never>? in
                        if slots.waiting.isEmpty {
                            slots.free += 1
                            return nil
                        }
                        return slots.waiting.removeFirst()
                    }
                    next?.resume()
                }
            }
        }
        #expect(most.withLock { $0 } <= 2)
        #expect(slots.withLock { $0.free } == 2, "every slot given back")
    }
}
