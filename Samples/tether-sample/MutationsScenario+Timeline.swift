import Foundation
import ResourceKit
import TetherConcurrency

extension MutationsScenario {
    /// The mutations scenario over time, for the report: the outbox's entries (read from the outbox itself, so the
    /// line goes on while no process holds them) and the run's changes the server applied, every 20 ms, and what
    /// happened when.
    final class Timeline: Sendable {
        private struct Series {
            var outbox: [(Double, Double)] = []
            var applied: [(Double, Double)] = []
            var events: [(seconds: Double, label: String)] = []
        }

        private let service: ResourceKit.Service
        private let baskets: DemoBaskets
        private let paths: [String]
        private let start = ContinuousClock.now
        private let state = LockedValue(Series())

        init(service: ResourceKit.Service, baskets: DemoBaskets, paths: [String]) {
            self.service = service
            self.baskets = baskets
            self.paths = paths
        }

        /// The run's changes the server has applied.
        var appliedNow: Int {
            let lines = baskets.statistics.lines
            return paths.reduce(0) { $0 + (lines[$1]?.count ?? 0) }
        }

        var series:
            (
                outbox: [(Double, Double)], applied: [(Double, Double)], events: [(seconds: Double, label: String)]
            )
        {
            state.withLock { ($0.outbox, $0.applied, $0.events) }
        }

        func mark(_ label: String) {
            let seconds = self.seconds
            state.withLock { $0.events.append((seconds, label)) }
        }

        /// Samples until cancelled.
        func sample() async throws {
            while true {
                try await sampleOnce()
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func sampleOnce() async throws {
            let pending = Double(try await service.pendingMutations().count)
            let applied = Double(appliedNow)
            let seconds = self.seconds
            state.withLock {
                $0.outbox.append((seconds, pending))
                $0.applied.append((seconds, applied))
            }
        }

        private var seconds: Double {
            (ContinuousClock.now - start).milliseconds / 1000
        }
    }
}
