public import TetherConcurrency

/// A lane seen as an `AsyncSequence`: asking for the next element is the signal.
///
/// It buffers nothing beyond the lane's bound — the element being processed and one waiting — so a slow consumer
/// sees the latest payload, never a backlog:
///
/// ```swift
/// let (lane, deliveries) = DeliveryLane<Snapshot>.stream()
/// Task { for await delivery in deliveries { await render(delivery.payload) } }
/// lane.submit(snapshot)
/// ```
///
/// The sequence ends when the lane is cancelled; cancelling the consuming task cancels the lane.
public struct DeliveryStream<Payload: Sendable>: AsyncSequence, Sendable {
    /// Each element is one delivery.
    public typealias Element = Delivery<Payload>

    @usableFromInline let buffer: StreamBuffer<Payload>
    @usableFromInline let lane: DeliveryLane<Payload>

    /// Makes the sequence's iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(buffer: buffer, lane: lane)
    }

    /// Takes deliveries one at a time; each call to ``next()`` signals that the previous one is done.
    public struct Iterator: AsyncIteratorProtocol {
        @usableFromInline let buffer: StreamBuffer<Payload>
        @usableFromInline let lane: DeliveryLane<Payload>

        /// Signals the previous delivery, then waits for the next; nil once the lane is cancelled. A delivery that
        /// the signal itself begins — a payload was waiting — is returned at once, without suspending.
        @inlinable
        public mutating func next() async -> Delivery<Payload>? {
            if Task.isCancelled {
                lane.cancel()  // which finishes the buffer
                return nil
            }
            if let previous = buffer.takeHeld(), let ready = lane.signalTakingNext(previous) {
                buffer.hold(ready.sequence)
                return ready.delivery
            }
            let buffer = self.buffer
            let lane = self.lane
            return await withTaskCancellationHandler {
                await buffer.next()
            } onCancel: {
                lane.cancel()  // which finishes the buffer
            }
        }
    }
}

extension DeliveryLane {
    /// Makes a lane whose deliveries are read as an `AsyncSequence` (see ``DeliveryStream``).
    public static func stream(
        coalescing: Coalescing<Payload> = .latest,
        skipIf isUnchanged: (@Sendable (Payload, Payload) -> Bool)? = nil,
        recorder: (any DeliveryRecorder)? = nil
    ) -> (lane: DeliveryLane, deliveries: DeliveryStream<Payload>) {
        let buffer = StreamBuffer<Payload>()
        let lane = DeliveryLane(
            executor: .inline, coalescing: coalescing, isUnchanged: isUnchanged, recorder: recorder,
            handler: .pulled { delivery, sequence in buffer.offer(delivery, sequence) },
            onCancel: { buffer.finish() })
        return (lane, DeliveryStream(buffer: buffer, lane: lane))
    }
}

/// The hand-over point between a stream's lane and its consumer: at most one delivery, the consumer's wait, and the
/// delivery the consumer holds — its next `next()` signals that one.
@usableFromInline
final class StreamBuffer<Payload: Sendable>: Sendable {
    @usableFromInline typealias Ready = DeliveryLane<Payload>.Ready

    @usableFromInline
    struct State: Sendable {
        @usableFromInline var ready: Ready?
        @usableFromInline var waiter: CheckedContinuation<Delivery<Payload>?, Never>?
        /// The sequence number of the delivery the consumer holds.
        @usableFromInline var held: UInt64?
        @usableFromInline var isFinished = false

        init() {}
    }

    @usableFromInline let state = LockedValue(State())
    /// Formed once: a key path written in a generic type is instantiated each time it is evaluated (see
    /// `takeOrPark`).
    @usableFromInline let waiterSlot = \State.waiter

    init() {}

    /// A delivery that began other than at the consumer's own signal (a payload submitted while it waited, or after
    /// the lane's idle callback): the parked consumer takes it, or else the next `next()`.
    @inlinable
    func offer(_ delivery: Delivery<Payload>, _ sequence: UInt64) {
        let resume = state.withLock { state -> (CheckedContinuation<Delivery<Payload>?, Never>, Delivery<Payload>)? in
            if state.isFinished { return nil }
            if let waiter = state.waiter.take() {
                state.held = sequence
                return (waiter, delivery)
            }
            state.ready = Ready(delivery: delivery, sequence: sequence)
            return nil
        }
        if let (waiter, delivery) = resume { waiter.resume(returning: delivery) }
    }

    /// The delivery the consumer holds, to signal: it is no longer held.
    @inlinable
    func takeHeld() -> UInt64? {
        state.withLock { $0.held.take() }
    }

    /// The consumer took delivery `sequence` at its signal.
    @inlinable
    func hold(_ sequence: UInt64) {
        state.withLock { $0.held = sequence }
    }

    /// The delivery waiting, or the next one offered; nil once finished.
    @inlinable
    func next() async -> Delivery<Payload>? {
        await state.takeOrPark(waiterSlot) { state -> Delivery<Payload>?? in
            if let ready = state.ready.take() {
                state.held = ready.sequence
                return .some(ready.delivery)
            }
            return state.isFinished ? .some(nil) : nil
        }
    }

    @inlinable
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Delivery<Payload>?, Never>? in
            state.isFinished = true
            state.ready = nil
            return state.waiter.take()
        }
        waiter?.resume(returning: nil)
    }
}
