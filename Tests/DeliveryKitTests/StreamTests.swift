import DeliveryKit
import Synchronization
import Testing

@Suite("AsyncSequence")
struct StreamTests {
    @Test("Asking for the next element is the signal; a slow consumer sees the latest, never a backlog")
    func latestOnly() async {
        let (lane, deliveries) = DeliveryLane<Int>.stream()
        lane.submit(1)
        var iterator = deliveries.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.payload == 1)
        for value in 2...100 { lane.submit(value) }
        let second = await iterator.next()
        #expect(second?.payload == 100)
        #expect(second?.supersededCount == 98)
        #expect(lane.statistics.heldHighWater <= 2)
    }

    @Test("The sequence ends when the lane is cancelled, also while a consumer waits")
    func endsOnCancel() async {
        let (lane, deliveries) = DeliveryLane<Int>.stream()
        let received = Flag()
        let consumer = Task {
            var count = 0
            for await _ in deliveries {
                count += 1
                received.swap(true)
            }
            return count
        }
        lane.submit(1)
        while !received.isSet { await Task.yield() }
        lane.cancel()
        #expect(await consumer.value == 1)
    }

    @Test("Cancelling the consuming task cancels the lane")
    func taskCancellationCancelsLane() async {
        let (lane, deliveries) = DeliveryLane<Int>.stream()
        let consumer = Task {
            for await _ in deliveries {}
        }
        await Task.yield()
        consumer.cancel()
        await consumer.value
        #expect(lane.isCancelled)
    }

    @Test("A payload waiting at the signal is taken there: next() returns it, counted as a delivery")
    func takenAtSignal() async {
        let recorder = CountingRecorder()
        let (lane, deliveries) = DeliveryLane<Int>.stream(recorder: recorder)
        lane.submit(1)
        var iterator = deliveries.makeAsyncIterator()
        #expect(await iterator.next()?.payload == 1)
        lane.submit(2)
        lane.submit(3)
        #expect(lane.held.waiting == 3, "the consumer holds 1: 3 waits, 2 coalesced into it")
        let taken = await iterator.next()
        #expect(taken?.payload == 3 && taken?.supersededCount == 1)
        #expect(lane.isBusy && lane.held.waiting == nil, "the consumer holds 3 until it asks again")
        #expect(lane.statistics.delivered == 2 && recorder.deliveries.load(ordering: .relaxed) == 2)
        lane.submit(4)
        #expect(await iterator.next()?.payload == 4, "the signal for 3 came from this next()")
        lane.cancel()
    }

    @Test("A payload found out of date at the signal is withdrawn, and the producer's latest is the next element")
    func outOfDateAtSignal() async {
        let (lane, deliveries) = DeliveryLane<Int>.stream()
        let producer = Log<Int>()
        // Odd payloads are out of date by the time the consumer signals; the producer then submits 10 × the count.
        lane.checkWaitingAtSignal { $0 % 2 == 0 }
        lane.onIdle { [weak lane] in
            producer.append(0)
            lane?.submit(10 * producer.count)
        }
        lane.submit(2)
        var iterator = deliveries.makeAsyncIterator()
        #expect(await iterator.next()?.payload == 2)
        lane.submit(3)
        #expect(await iterator.next()?.payload == 10, "3 withdrawn; the producer, called at the signal, submitted 10")
        lane.submit(4)
        #expect(await iterator.next()?.payload == 4, "current: taken at the signal, the producer not called")
        #expect(producer.count == 1)
        lane.cancel()
    }

    @Test("A new iterator signals the delivery the last one left unsignalled")
    func secondIterator() async {
        let (lane, deliveries) = DeliveryLane<Int>.stream()
        lane.submit(1)
        do {
            var first = deliveries.makeAsyncIterator()
            #expect(await first.next()?.payload == 1)
        }
        lane.submit(2)
        var second = deliveries.makeAsyncIterator()
        #expect(await second.next()?.payload == 2)
        lane.cancel()
    }

    @Test("A cancelled task's next() returns nil, though a payload waits, and cancels the lane")
    func cancelledWithPayloadWaiting() async {
        let (lane, deliveries) = DeliveryLane<Int>.stream()
        lane.submit(1)
        lane.submit(2)
        let consumer = Task {
            var iterator = deliveries.makeAsyncIterator()
            let first = await iterator.next()?.payload
            withUnsafeCurrentTask { $0?.cancel() }
            let second = await iterator.next()?.payload
            return (first, second)
        }
        let (first, second) = await consumer.value
        #expect(first == 1 && second == nil)
        #expect(lane.isCancelled && lane.statistics.droppedByCancellation == 1)
    }
}
