/// Ends an observation, or the delivery work behind one: Tether's one cancellation vocabulary, modelled on GRDB's
/// `DatabaseCancellable`.
///
/// Adopted by `ObservationToken`, `LiveQuery`, `LiveQuerySnapshots`, `ChangeSubscription`, `ChangeStream` and
/// `DeliveryLane`. For each of them:
/// - ``cancel()`` is idempotent and may be called from any thread, including from inside the observer's own handler
///   (it then returns at once);
/// - a class that adopts it also cancels when it is deinitialized, and that never waits for anything;
/// - what "nothing further" means after `cancel()` returns is each type's own promise, stated on it.
///
/// ```swift
/// var cancellables: [any ObservationCancellable] = []
/// cancellables.append(table.observe(panel))
/// cancellables.append(try items.find("store_id == 'abc'").observeLocal { documents, _ in render(documents) })
/// cancellables.forEach { $0.cancel() }
/// ```
public protocol ObservationCancellable: Sendable {
    /// Ends the observation.
    func cancel()
}
