/// How long a query's observers take over a result — from being handed it to signalling for the next — and when the
/// engine is to compute the held-back result, just before the next signal is due.
///
/// Measured at each signal, one clock read per hand-out and per signal: the engine then computes the latest result a
/// little before the busy observer is expected to ask for it, so that the signal takes it at once instead of waiting
/// for it to be computed — one computation per delivery, however fast the writer. A signal that comes early, or a
/// commit after the computation, costs what it costs without this: the result is computed when the observer signals.
struct SignalPace: Sendable {
    /// Observers quicker than this cost nothing worth saving: nothing is computed ahead for them.
    static let threshold = Duration.milliseconds(1)
    /// The result is computed a quarter of the handling time before the signal is due, and at most this long before.
    static let maximumLead = Duration.milliseconds(1)

    /// The handling time measured at the last signal; nil before the first.
    private(set) var handling: Duration?
    /// When the computation scheduled last is due (on the time source's `elapsed`): one is scheduled at a time.
    private(set) var due: Duration?

    /// An observer handed a result at `handedAt` signalled at `now`.
    mutating func signalled(handedAt: Duration, now: Duration) {
        handling = now - handedAt
    }

    /// An observer was handed a result at `now`: how long from now to compute ahead of its signal, when a computation
    /// is to be scheduled — none is when one is still to come, or the observers are quicker than ``threshold``.
    mutating func handedOut(at now: Duration) -> Duration? {
        guard let handling, handling >= Self.threshold, due.map({ $0 <= now }) ?? true else { return nil }
        let delay = handling - min(handling / 4, Self.maximumLead)
        due = now + delay
        return delay
    }
}
