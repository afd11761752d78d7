#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The memory-pressure events a ``Service`` has responded to through its monitors (see
/// ``Service/memoryPressureMonitor(source:)``), as an inspector shows them. Field names are stable: they are the
/// inspector's JSON.
package struct MemoryPressureInspection: Sendable, Hashable, Codable {
    /// The latest event.
    package struct Event: Sendable, Hashable, Codable {
        /// The source's name (`psi`, `resident`, `manual`, …).
        package var source: String
        /// How pressing it was (`warning`, `critical`).
        package var level: String
        /// What the source saw.
        package var reason: String
        /// Resources the flush it caused released.
        package var released: Int
        /// Seconds since it came, on the service's time source.
        package var ageSeconds: Double
    }

    /// Events responded to.
    package var events: Int
    /// Resources their flushes released, in all.
    package var released: Int
    /// The latest, if any came.
    package var last: Event?
}

/// What a service keeps of the memory-pressure events it responded to: a count and the latest (per event, never
/// per delivery).
struct MemoryPressureRecord: Sendable {
    var events = 0
    var released = 0
    var last: (source: String, level: String, reason: String, released: Int, at: Date)?

    mutating func record(source: String, level: String, reason: String, released: Int, at now: Date) {
        events += 1
        self.released += released
        last = (source, level, reason, released, now)
    }

    func inspection(now: Date) -> MemoryPressureInspection {
        MemoryPressureInspection(
            events: events, released: released,
            last: last.map { last in
                .init(
                    source: last.source, level: last.level, reason: last.reason, released: last.released,
                    ageSeconds: max(0, now.timeIntervalSince(last.at)))
            })
    }
}
