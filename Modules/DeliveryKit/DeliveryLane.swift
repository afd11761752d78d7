public import TetherConcurrency

/// One observer's delivery lane: the bounded mechanism every delivery policy is built on.
///
/// A producer ``submit(_:)``s payloads as fast as it likes; the lane holds **at most two**: the one its observer is
/// processing and one waiting. A payload submitted while another waits replaces it (or merges with it, see
/// ``Coalescing``), so memory stays flat however fast the producer and however slow the consumer. The observer
/// gets the next delivery only once it has signalled that it is done with the previous one — by calling its
/// ``SignalNext`` (next-signal) or by returning from its handler (immediate, deliver-on-queue, async) — and then it
/// gets exactly one: the latest payload, and only if it differs from the last one delivered, when an equality is
/// given.
///
/// ```swift
/// let lane = DeliveryLane<Snapshot>(on: .serialQueue()) { delivery, signalNext in
///     render(delivery.payload) {        // asynchronous work that holds the payload
///         signalNext()                 // done: the lane may deliver the latest snapshot now
///     }
/// }
/// lane.submit(snapshot)                // never blocks, never queues more than one
/// ```
///
/// Cancelling (``cancel()``) stops new deliveries at once and releases the waiting payload at once. A lane does not
/// keep itself alive: when its last reference goes, it and its payloads go too.
public final class DeliveryLane<Payload: Sendable>: ObservationCancellable {
    /// How the observer's code is called, and who signals.
    @usableFromInline
    enum Handler: Sendable {
        /// The observer signals, by calling `SignalNext`: the general form.
        case signalling(@Sendable (Delivery<Payload>, SignalNext) -> Void)
        /// The lane signals when the handler returns (immediate and deliver-on-queue).
        case returning(@Sendable (Delivery<Payload>) -> Void)
        /// The lane signals when the async handler returns; it runs in a task, on the handler's own isolation.
        case asynchronous(@Sendable (Delivery<Payload>) async -> Void)
        /// The consumer pulls (a stream): it signals with the delivery's sequence number, and takes the next delivery
        /// at its signal when one begins there (``DeliveryLane/signalTakingNext(_:)``); the handler is given only
        /// those that begin at another moment — submitted to an idle consumer.
        case pulled(@Sendable (Delivery<Payload>, UInt64) -> Void)
    }

    @usableFromInline
    struct State: Sendable {
        /// The payload waiting for the observer's signal.
        @usableFromInline var waiting: Delivery<Payload>?
        /// A delivery begun (the observer is owed it) that its executor has not yet handed over.
        @usableFromInline var ready: Delivery<Payload>?
        /// The sequence number of the delivery awaiting its signal, if any.
        @usableFromInline var inFlight: UInt64?
        @usableFromInline var nextSequence: UInt64 = 1
        /// The last payload delivered, kept only when an equality decides whether to skip.
        @usableFromInline var lastDelivered: Payload?
        @usableFromInline var isCancelled = false
        @usableFromInline var statistics = DeliveryStatistics()
        /// Called when the observer signals and nothing waits (see ``DeliveryLane/onIdle(_:)``).
        @usableFromInline var onIdle: (@Sendable () -> Void)?
        /// Whether the payload waiting is still worth delivering, asked at the observer's signal (see
        /// ``DeliveryLane/checkWaitingAtSignal(_:)``).
        @usableFromInline var isWaitingCurrent: (@Sendable (Payload) -> Bool)?
        /// What this lane's signals hold (see ``SignalNext``), made at the first next-signal delivery.
        @usableFromInline var signalTarget: LaneSignal<Payload>?

        @usableFromInline var held: Int { (inFlight == nil ? 0 : 1) + (waiting == nil ? 0 : 1) }

        /// Takes the begun delivery, with its sequence number, for the executor to hand over.
        @inlinable
        mutating func takeReady() -> Ready? {
            guard let delivery = ready.take(), let sequence = inFlight else { return nil }
            return Ready(delivery: delivery, sequence: sequence)
        }

        @inlinable
        init() {}
    }

    /// A begun delivery, taken by the executor to hand over.
    @usableFromInline
    struct Ready: Sendable {
        @usableFromInline var delivery: Delivery<Payload>
        @usableFromInline let sequence: UInt64

        @inlinable
        init(delivery: Delivery<Payload>, sequence: UInt64) {
            self.delivery = delivery
            self.sequence = sequence
        }
    }

    /// What a locked step decided, acted on once the lock is released. The payloads it lets go of are kept apart,
    /// in a ``ReleasedPayloads`` of the caller's: a step holds nothing of the payload's type, so that passing it on
    /// copies a few words, where a layout that depends on the payload is copied and destroyed through its type's
    /// value witnesses.
    @usableFromInline
    struct Step: Sendable {
        /// Whether a delivery began: the executor is to hand it over (it takes it, with its sequence, from the state).
        @usableFromInline var began = false
        @usableFromInline var coalesced = false
        @usableFromInline var skipped = false
        @usableFromInline var held = 0
        /// The observer signalled and nothing waited: the producer's idle callback is to run.
        @usableFromInline var idle: (@Sendable () -> Void)?

        @inlinable
        init() {}
    }

    @usableFromInline let state = LockedValue(State())
    @usableFromInline let executor: any DeliveryExecutor
    @usableFromInline let handler: Handler
    @usableFromInline let coalescing: Coalescing<Payload>
    @usableFromInline let isUnchanged: (@Sendable (Payload, Payload) -> Bool)?
    @usableFromInline let recorder: (any DeliveryRecorder)?
    /// Runs once when the lane is cancelled (a stream's lane ends its sequence).
    @usableFromInline let onCancel: (@Sendable () -> Void)?

    init(
        executor: any DeliveryExecutor, coalescing: Coalescing<Payload>,
        isUnchanged: (@Sendable (Payload, Payload) -> Bool)?, recorder: (any DeliveryRecorder)?, handler: Handler,
        onCancel: (@Sendable () -> Void)? = nil
    ) {
        self.onCancel = onCancel
        self.executor = executor
        self.handler = handler
        self.coalescing = coalescing
        self.isUnchanged = isUnchanged
        self.recorder = recorder
    }

    /// Makes a next-signal lane, the general form: `handler` runs on `executor`, and nothing more is delivered
    /// until it calls its `SignalNext`.
    ///
    /// - Parameters:
    ///   - executor: Where `handler` runs. Defaults to a serial queue of the lane's own, never the main queue.
    ///   - coalescing: What happens to a payload submitted while another waits. Defaults to ``Coalescing/latest``.
    ///   - isUnchanged: When given, a payload equal to the last one delivered is not delivered. Keeping the last
    ///     payload to compare with is the price: it stays alive until the next delivery.
    ///   - recorder: Receives counts as they change (metrics).
    ///   - handler: The observer's code. Call `SignalNext` once the payload is processed and released.
    public convenience init(
        on executor: any DeliveryExecutor = .serialQueue(),
        coalescing: Coalescing<Payload> = .latest,
        skipIf isUnchanged: (@Sendable (Payload, Payload) -> Bool)? = nil,
        recorder: (any DeliveryRecorder)? = nil,
        handler: @escaping @Sendable (Delivery<Payload>, SignalNext) -> Void
    ) {
        self.init(
            executor: executor, coalescing: coalescing, isUnchanged: isUnchanged, recorder: recorder,
            handler: .signalling(handler))
    }

    // MARK: Producing

    /// Offers `payload` to the observer. Never blocks and never queues more than one payload: if one is already
    /// waiting, `payload` replaces it (or merges with it). Dropped at once when the lane is cancelled.
    @inlinable
    public func submit(_ payload: Payload) {
        var released = ReleasedPayloads<Payload>()
        let step = state.withLock { state -> Step in
            var step = Step()
            guard !state.isCancelled else {
                state.statistics.droppedByCancellation += 1
                return step
            }
            state.statistics.submitted += 1
            if var waiting = state.waiting.take() {
                let older = waiting.payload
                waiting.payload = coalescing.coalesce(older, payload)
                waiting.supersededCount += 1
                state.waiting = waiting
                state.statistics.coalesced += 1
                step.coalesced = true
                released.append(older)
            } else {
                state.waiting = Delivery(payload: payload)
            }
            begin(&state, &step, &released)
            // Skipped as unchanged by an idle observer: it is still idle, and nothing waits.
            if step.skipped, state.inFlight == nil, state.waiting == nil { step.idle = state.onIdle }
            return step
        }
        finish(step, dropping: released)
    }

    /// Stops the lane: no delivery starts from now on, and the waiting payload (and the last one kept for
    /// comparison) is released before this returns. A handler already running finishes undisturbed.
    ///
    /// Inlinable, so that a lane's owner in another module (every live query stops its lane) calls it specialised,
    /// not through the generic entry point that looks up the lane's state type at run time.
    @inlinable
    public func cancel() {
        let (released, first) = state.withLock { state -> (ReleasedPayloads<Payload>, Bool) in
            let first = !state.isCancelled
            state.isCancelled = true
            var released = ReleasedPayloads<Payload>()
            if let waiting = state.waiting.take() {
                state.statistics.droppedByCancellation += 1 + waiting.supersededCount
                released.append(waiting.payload)
            }
            if let ready = state.ready.take() {
                state.statistics.droppedByCancellation += 1 + ready.supersededCount
                released.append(ready.payload)
            }
            if let last = state.lastDelivered.take() { released.append(last) }
            state.onIdle = nil
            state.isWaitingCurrent = nil
            return (released, first)
        }
        _ = consume released  // released here, outside the lock
        if first { onCancel?() }
    }

    // MARK: Producing on demand

    /// Whether the observer holds a delivery it has not yet signalled: a payload submitted now would wait.
    public var isBusy: Bool {
        state.withLock { $0.inFlight != nil }
    }

    /// Releases the payload waiting, if any, without delivering it; returns whether there was one. The observer's
    /// next delivery is then the next payload submitted. (For a producer whose payloads cost work to compute, such as
    /// LiveQueryKit's engine: it holds back while the lane is busy, and computes the latest when it is idle.)
    @discardableResult
    package func withdrawWaiting() -> Bool {
        let withdrawn = state.withLock { Self.withdraw(&$0) }
        return withdrawn != nil  // released here, outside the lock
    }

    /// Calls `body` each time the observer signals that it is done and no payload waits — the moment a producer
    /// that held back (see ``isBusy``) submits the latest — and when a payload submitted to an idle observer is
    /// skipped as unchanged (it is still idle). Called on the signalling (or submitting) thread, outside the lane's
    /// lock; replaces an earlier callback.
    package func onIdle(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.onIdle = body }
    }

    /// Sets the check the lane makes when the observer signals and a payload waits: a payload `isCurrent` says is out
    /// of date is withdrawn instead of delivered, and the lane is idle — its idle callback runs, and the producer
    /// submits the latest. A producer that computes a payload ahead, while the observer is busy, submits it at once
    /// with this check: the observer's signal then starts its delivery with no hop through the producer, unless
    /// something made it stale meanwhile. Replaces an earlier check.
    ///
    /// Called under the lane's lock, on the signalling thread: it must be quick, and must not call into the lane.
    package func checkWaitingAtSignal(_ isCurrent: @escaping @Sendable (Payload) -> Bool) {
        state.withLock { $0.isWaitingCurrent = isCurrent }
    }

    /// What the lane holds now, for an inspector: whether the observer has a delivery it has not yet signalled, and
    /// the payload waiting for that signal (the latest: earlier ones were coalesced into it).
    public var held: (isBusy: Bool, waiting: Payload?) {
        state.withLock { ($0.inFlight != nil, $0.waiting?.payload) }
    }

    /// Whether ``cancel()`` has been called.
    @inlinable
    public var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }

    /// The lane's counts so far.
    public var statistics: DeliveryStatistics {
        state.withLock { $0.statistics }
    }

    // MARK: The mechanism

    /// Under the lock: if the observer is free and a payload waits, begins delivering it.
    @inlinable
    func begin(_ state: inout State, _ step: inout Step, _ released: inout ReleasedPayloads<Payload>) {
        defer {
            step.held = state.held
            state.statistics.heldHighWater = max(state.statistics.heldHighWater, step.held)
        }
        guard state.inFlight == nil, !state.isCancelled, let next = state.waiting.take() else { return }
        if let isUnchanged, let last = state.lastDelivered, isUnchanged(last, next.payload) {
            state.statistics.skippedUnchanged += 1
            step.skipped = true
            released.append(next.payload)
            return
        }
        if isUnchanged != nil, let replaced = state.lastDelivered.take() { released.append(replaced) }
        if isUnchanged != nil { state.lastDelivered = next.payload }
        let sequence = state.nextSequence
        state.nextSequence += 1
        state.inFlight = sequence
        state.ready = next
        state.statistics.delivered += 1
        step.began = true
    }

    /// Under the lock, at the observer's signal: withdraws the payload waiting if the producer's check says it is out
    /// of date.
    @inlinable
    func withdrawIfOutdated(_ state: inout State, _ released: inout ReleasedPayloads<Payload>) {
        guard let isCurrent = state.isWaitingCurrent, let waiting = state.waiting, !isCurrent(waiting.payload) else {
            return
        }
        if let withdrawn = Self.withdraw(&state) { released.append(withdrawn.payload) }
    }

    /// Under the lock: takes the payload waiting, counted as coalesced — the producer's next payload supersedes it
    /// (those it had superseded were counted as they were).
    @inlinable
    static func withdraw(_ state: inout State) -> Delivery<Payload>? {
        guard let waiting = state.waiting.take() else { return nil }
        state.statistics.coalesced += 1
        return waiting
    }

    /// Outside the lock: reports counts, drops the payloads released, and hands a begun delivery to the executor.
    @inlinable
    func finish(_ step: Step, dropping released: consuming ReleasedPayloads<Payload>) {
        if let recorder {
            if step.coalesced { recorder.recordCoalesced() }
            if step.skipped { recorder.recordSkippedUnchanged() }
            if step.began { recorder.recordDelivery() }
            recorder.recordHeld(step.held)
        }
        _ = consume released  // dropped here, outside the lock
        step.idle?()
        guard step.began else { return }
        switch handler {
        case .asynchronous(let body):
            Task { await self.handOverAsync(to: body) }
        default:
            executor.execute { self.handOver() }
        }
    }

    /// On the executor: takes the begun delivery and calls the handler with it.
    @inlinable
    func handOver() {
        switch handler {
        case .signalling(let body):
            guard let (ready, target) = takeReadyToSignal() else { return }
            let signal = SignalNext(target: target ?? makeSignalTarget(), sequence: ready.sequence) {
                target, sequence in
                unsafeDowncast(target, to: LaneSignal<Payload>.self).lane?.signal(sequence)
            }
            call(body, with: (consume ready).delivery, signal: signal)
        case .returning(let body):
            guard let ready = takeReady() else { return }
            let sequence = ready.sequence
            call(body, with: (consume ready).delivery)
            signal(sequence)
        case .pulled(let body):
            guard let ready = takeReady() else { return }
            let sequence = ready.sequence
            body((consume ready).delivery, sequence)
        case .asynchronous:
            preconditionFailure("asynchronous handlers are handed over in a task")
        }
    }

    @inlinable
    func handOverAsync(to body: @Sendable (Delivery<Payload>) async -> Void) async {
        guard let ready = takeReady() else { return }
        let sequence = ready.sequence
        await callAsync(body, with: (consume ready).delivery)
        signal(sequence)
    }

    /// Makes the object this lane's signals hold, once (``takeReadyToSignal()`` hands it over from then on).
    @inlinable
    func makeSignalTarget() -> LaneSignal<Payload> {
        let made = LaneSignal(self)
        return state.withLock { state in
            if let target = state.signalTarget { return target }
            state.signalTarget = made
            return made
        }
    }

    @inlinable
    func takeReady() -> Ready? {
        state.withLock { $0.takeReady() }
    }

    /// Takes the begun delivery for a next-signal handler, with what the lane's signals hold once it is made.
    @inlinable
    func takeReadyToSignal() -> (ready: Ready, signalTarget: LaneSignal<Payload>?)? {
        state.withLock { state in
            guard let ready = state.takeReady() else { return nil }
            return (ready, state.signalTarget)
        }
    }

    // The delivery is consumed by these calls, so the lane's reference is gone by the time the lane signals:
    // a producer submitting at that moment finds at most one other payload alive.
    @inlinable
    func call(
        _ body: @Sendable (Delivery<Payload>, SignalNext) -> Void, with delivery: consuming Delivery<Payload>,
        signal: SignalNext
    ) {
        body(delivery, signal)
    }

    @inlinable
    func call(_ body: @Sendable (Delivery<Payload>) -> Void, with delivery: consuming Delivery<Payload>) {
        body(delivery)
    }

    @inlinable
    func callAsync(_ body: @Sendable (Delivery<Payload>) async -> Void, with delivery: consuming Delivery<Payload>)
        async
    {
        await body(delivery)
    }

    /// The observer is done with delivery `sequence`: begin the next, if a payload waits. Later calls for the same
    /// delivery, and calls after cancellation, do nothing.
    @inlinable
    func signal(_ sequence: UInt64) {
        var released = ReleasedPayloads<Payload>()
        guard let step = state.withLock({ signalled(sequence, &$0, &released) }) else { return }
        finish(step, dropping: released)
    }

    /// A pulling consumer is done with delivery `sequence` (see ``Handler/pulled(_:)``): when its signal begins the
    /// next delivery, returns it, taken on the spot — one turn of the lock, no hand-over through the executor.
    /// Nil when none began: the idle callback has run, and a delivery that begins later reaches the handler.
    @inlinable
    func signalTakingNext(_ sequence: UInt64) -> Ready? {
        var released = ReleasedPayloads<Payload>()
        let (step, taken) = state.withLock { state -> (Step?, Ready?) in
            guard var step = signalled(sequence, &state, &released) else { return (nil, nil) }
            guard step.began, let sequence = state.inFlight, let delivery = state.ready.take() else {
                return (step, nil)
            }
            step.began = false  // taken here: nothing for the executor to hand over
            return (step, Ready(delivery: delivery, sequence: sequence))
        }
        if taken != nil { recorder?.recordDelivery() }
        if let step { finish(step, dropping: released) }
        return taken
    }

    /// Under the lock, at the observer's signal for delivery `sequence`: begins the next delivery if a current payload
    /// waits, or notes that the producer's idle callback is to run. Nil for a stale or repeated signal.
    @inlinable
    func signalled(_ sequence: UInt64, _ state: inout State, _ released: inout ReleasedPayloads<Payload>) -> Step? {
        guard state.inFlight == sequence else { return nil }
        state.inFlight = nil
        var step = Step()
        withdrawIfOutdated(&state, &released)
        begin(&state, &step, &released)
        if !step.began, state.waiting == nil, !state.isCancelled { step.idle = state.onIdle }
        return step
    }
}
