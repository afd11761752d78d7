public import CoreMetrics
public import DeliveryKit

/// Reports a lane's counts through swift-metrics: how back pressure is working, on whatever backend the
/// application bootstrapped (Prometheus, StatsD, OpenTelemetry…).
///
/// Metrics, each with the dimensions given at initialisation (for example `[("observer", "dashboard")]`):
/// - `tether_delivery_delivered_total` (counter): deliveries begun;
/// - `tether_delivery_coalesced_total` (counter): payloads folded into a waiting one instead of queuing;
/// - `tether_delivery_skipped_unchanged_total` (counter): payloads dropped as equal to the last delivered;
/// - `tether_delivery_held` (gauge): payloads the lane holds now, being processed plus waiting (0, 1 or 2).
///
/// ```swift
/// let recorder = SwiftMetricsDeliveryRecorder(dimensions: [("observer", "dashboard")])
/// let lane = DeliveryLane<Snapshot>(recorder: recorder) { delivery, signalNext in … }
/// ```
public struct SwiftMetricsDeliveryRecorder: DeliveryRecorder {
    private let delivered: Counter
    private let coalesced: Counter
    private let skipped: Counter
    private let held: Gauge

    /// Makes a recorder reporting to `factory` (the bootstrapped one by default) under `dimensions`.
    public init(dimensions: [(String, String)] = [], factory: any MetricsFactory = MetricsSystem.factory) {
        delivered = Counter(label: "tether_delivery_delivered_total", dimensions: dimensions, factory: factory)
        coalesced = Counter(label: "tether_delivery_coalesced_total", dimensions: dimensions, factory: factory)
        skipped = Counter(label: "tether_delivery_skipped_unchanged_total", dimensions: dimensions, factory: factory)
        held = Gauge(label: "tether_delivery_held", dimensions: dimensions, factory: factory)
    }

    /// Counts a delivery.
    public func recordDelivery() { delivered.increment() }
    /// Counts a coalesced payload.
    public func recordCoalesced() { coalesced.increment() }
    /// Counts a payload skipped as unchanged.
    public func recordSkippedUnchanged() { skipped.increment() }
    /// Records how many payloads the lane holds.
    public func recordHeld(_ count: Int) { held.record(count) }
}
