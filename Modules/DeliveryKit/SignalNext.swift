/// Tells a lane that its observer has finished with a delivery and is ready for the next.
///
/// Call it from any thread, at any time after the delivery began. Calling it more than once is harmless: only the
/// first call for a delivery counts. Until it is called, the lane delivers nothing more to this observer — newer
/// payloads coalesce into one waiting payload — and nothing else is held up: not the producer, not other lanes.
public struct SignalNext: Sendable {
    private let signal: @Sendable () -> Void

    /// Makes a signal that runs `signal` (the lane's, for one delivery).
    public init(_ signal: @escaping @Sendable () -> Void) {
        self.signal = signal
    }

    /// Signals that the delivery is processed and its payload released.
    public func callAsFunction() {
        signal()
    }
}
