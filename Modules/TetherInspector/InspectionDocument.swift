package import LiveQueryKit
import OwnershipKit
package import ResourceKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `GET /api/v1/inspection` returns: every service and store the inspector watches, as they are now. Version 1;
/// field names are stable, and new fields may be added (a client ignores the ones it does not know).
package struct InspectionDocument: Sendable, Hashable, Codable {
    /// A watched service.
    package struct NamedService: Sendable, Hashable, Codable {
        /// The name it was watched under.
        package var name: String
        /// Its resources and their observers.
        package var service: ServiceInspection
    }

    /// A watched store.
    package struct NamedStore: Sendable, Hashable, Codable {
        /// The name it was watched under.
        package var name: String
        /// Its live queries and their observers.
        package var store: StoreInspection
    }

    /// How many observers are owned by live objects of one type, across every service and store: where a leak
    /// shows ("12 `ProfileScreen` owners alive, 6 expected").
    package struct OwnerCount: Sendable, Hashable, Codable {
        /// The owners' type name.
        package var type: String
        /// How many distinct observations such owners keep alive now.
        package var observations: Int
        /// How long, in seconds, the oldest of these observations has been alive — counted from the first
        /// inspection that saw it, since the core records no time per observer.
        package var oldestSeconds: Double
    }

    /// The API's version: 1.
    package var version = 1
    /// When the document was taken (seconds since 1970).
    package var takenAt: Double
    /// The watched services, in the order they were watched.
    package var services: [NamedService]
    /// The watched stores, in the order they were watched.
    package var stores: [NamedStore]
    /// Observations by the type of their live owners, most first (observers' own types when self-owned; the
    /// `LiveQuery` handle's when no owner was given).
    package var owners: [OwnerCount]
    /// Resources kept only by a reference from outside the cache: flushed (or unobserved), and still alive.
    package var keptFromOutside: [String]

    init(takenAt: Date, services: [NamedService], stores: [NamedStore], ages: inout ObservationAges) {
        self.takenAt = takenAt.timeIntervalSince1970
        self.services = services
        self.stores = stores
        var counts: [String: (observations: Int, oldest: Double)] = [:]
        func count(_ types: [String], _ key: ObservationAges.Key) {
            let age = ages.see(key, at: takenAt)
            for type in types {
                let count = counts[type] ?? (0, 0)
                counts[type] = (count.observations + 1, max(count.oldest, age))
            }
        }
        for named in services {
            for resource in named.service.resources {
                for observer in resource.observers where observer.isObserving {
                    let owners = observer.owners.filter(\.isAlive).map(\.type)
                    count(
                        owners.isEmpty ? [observer.observerType] : owners,
                        .init(place: "service \(named.name) \(resource.url)", id: observer.id))
                }
            }
        }
        for named in stores {
            for query in named.store.liveQueries {
                for observer in query.observers where observer.isObserving {
                    count(
                        observer.owners.filter(\.isAlive).map(\.type),
                        .init(place: "store \(named.name)", id: observer.id))
                }
            }
        }
        ages.finishInspection()
        owners = counts.map {
            OwnerCount(type: $0.key, observations: $0.value.observations, oldestSeconds: $0.value.oldest)
        }
        .sorted { ($0.observations, $1.type) > ($1.observations, $0.type) }
        keptFromOutside = services.flatMap { named in
            named.service.resources.filter { !$0.isObserved && $0.isReferencedElsewhere }.map(\.url)
        }
    }
}
