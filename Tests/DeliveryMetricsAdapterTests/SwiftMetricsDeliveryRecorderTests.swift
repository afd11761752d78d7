import DeliveryKit
import DeliveryMetricsAdapter
import MetricsTestKit
import Testing

@Suite("SwiftMetricsDeliveryRecorder")
struct SwiftMetricsDeliveryRecorderTests {
    @Test("Counts reach swift-metrics under the given dimensions")
    func reportsThroughSwiftMetrics() throws {
        let metrics = TestMetrics()
        let dimensions = [("observer", "dashboard")]
        let recorder = SwiftMetricsDeliveryRecorder(dimensions: dimensions, factory: metrics)
        let lane = DeliveryLane<Int>.nextSignal(deliverOn: .inline, skipIf: ==, recorder: recorder) { _, _ in }
        lane.submit(1)
        lane.submit(2)
        lane.submit(3)
        #expect(try metrics.expectCounter("tether_delivery_delivered_total", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("tether_delivery_coalesced_total", dimensions).totalValue == 1)
        #expect(try metrics.expectGauge("tether_delivery_held", dimensions).lastValue == 2)
    }
}
