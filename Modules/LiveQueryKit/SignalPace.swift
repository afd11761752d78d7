/// How long a query's observers take over a result — from being handed it to signalling for the next — and when the
/// engine is to compute the held-back result, just before the next signal is due.
///
/// Measured at each signal, one clock read per hand-out and per signal: the engine then computes the latest result a
/// little before the busy observer is expected to ask for it, so that the signal takes it at once instead of waiting
/// for it to be computed — one computation per delivery, however fast the writer. A signal that comes early, or a
/// commit after the computation, costs what it costs without this: the result is computed when the observer signals.
///
/// A hand-out only notes when the computation will be due; the engine schedules it (``held(at:)``) in the round that
/// made the hand-out — every observer is busy from then on, so the commits after it are only kept — or, for a result
/// an observer took as it signalled, in the round that first holds a commit back after it. So neither the signalling
/// thread nor the writer's pays for a timer.
struct SignalPace: Sendable {
    /// Observers quicker than this cost nothing worth saving: nothing is computed ahead for them.
    static let threshold = Duration.milliseconds(1)
    /// The result is computed a quarter of the handling time before the signal is due, and at most this long before.
    static let maximumLead = Duration.milliseconds(1)

    /// The handling time measured at the last signal; nil before the first.
    private(set) var handling: Duration?
    /// When the computation for the last hand-out is due (on the time source's `elapsed`), until it is scheduled.
    private(set) var pending: Duration?
    /// When the computation scheduled last is due: one is scheduled at a time.
    private(set) var due: Duration?

    /// An observer handed a result at `handedAt` signalled at `now`.
    mutating func signalled(handedAt: Duration, now: Duration) {
        handling = now - handedAt
    }

    /// An observer was handed a result at `now`: notes when to compute ahead of its signal — never for observers
    /// quicker than ``threshold``.
    mutating func handedOut(at now: Duration) {
        guard let handling, handling >= Self.threshold else {
            pending = nil
            return
        }
        pending = now + handling - min(handling / 4, Self.maximumLead)
    }

    /// The query's changes are held back from `now` on: how long from now to compute ahead of the signal, when a
    /// computation is pending and none scheduled is still to come. At once when it is overdue.
    mutating func held(at now: Duration) -> Duration? {
        guard let pending, due.map({ $0 <= now }) ?? true else { return nil }
        self.pending = nil
        due = max(pending, now)
        return max(.zero, pending - now)
    }
}
