import TetherConcurrency

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

    let buffer: StreamBuffer<Payload>
    let lane: DeliveryLane<Payload>

    /// Makes the sequence's iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(buffer: buffer, lane: lane)
    }

    /// Takes deliveries one at a time; each call to ``next()`` signals that the previous one is done.
    public struct Iterator: AsyncIteratorProtocol {
        let buffer: StreamBuffer<Payload>
        let lane: DeliveryLane<Payload>

        /// Signals the previous delivery, then waits for the next; nil once the lane is cancelled.
        public mutating func next() async -> Delivery<Payload>? {
            buffer.signalPrevious()
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
            handler: .signalling { delivery, signalNext in buffer.offer(delivery, signalNext) },
            onCancel: { buffer.finish() })
        return (lane, DeliveryStream(buffer: buffer, lane: lane))
    }
}

/// The hand-over point between a stream's lane and its consumer: at most one delivery, and the consumer's wait.
final class StreamBuffer<Payload: Sendable>: Sendable {
    struct State: Sendable {
        var ready: (Delivery<Payload>, SignalNext)?
        var waiter: CheckedContinuation<Delivery<Payload>?, Never>?
        var signalForPrevious: SignalNext?
        var isFinished = false
    }

    let state = LockedValue(State())
    /// Formed once: a key path written in a generic type is instantiated each time it is evaluated (see
    /// `takeOrPark`).
    let waiterSlot = \State.waiter

    func offer(_ delivery: Delivery<Payload>, _ signal: SignalNext) {
        let resume = state.withLock { state -> (CheckedContinuation<Delivery<Payload>?, Never>, Delivery<Payload>)? in
            if state.isFinished { return nil }
            if let waiter = state.waiter.take() {
                state.signalForPrevious = signal
                return (waiter, delivery)
            }
            state.ready = (delivery, signal)
            return nil
        }
        if let (waiter, delivery) = resume { waiter.resume(returning: delivery) }
    }

    func signalPrevious() {
        let signal = state.withLock { $0.signalForPrevious.take() }
        signal?()
    }

    /// The delivery waiting, or the next one offered; nil once finished.
    func next() async -> Delivery<Payload>? {
        await state.takeOrPark(waiterSlot) { state -> Delivery<Payload>?? in
            if let (delivery, signal) = state.ready.take() {
                state.signalForPrevious = signal
                return .some(delivery)
            }
            return state.isFinished ? .some(nil) : nil
        }
    }

    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Delivery<Payload>?, Never>? in
            state.isFinished = true
            state.ready = nil
            return state.waiter.take()
        }
        waiter?.resume(returning: nil)
    }
}
