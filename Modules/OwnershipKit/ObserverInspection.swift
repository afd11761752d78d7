import TetherConcurrency

/// One observer as an inspector shows it: what it is, how it is held, and who owns it.
///
/// Taken on demand by ``ObserverTable/inspect()``: nothing is recorded per delivery for it.
package struct ObserverInspection: Sendable, Hashable, Codable {
    /// One owner of the observer.
    package struct Owner: Sendable, Hashable, Codable {
        /// The owner's type name (`ProfileScreen`), known also once it is gone.
        package var type: String
        /// Whether the owner is alive now.
        package var isAlive: Bool

        /// Makes an owner's inspection.
        package init(type: String, isAlive: Bool) {
            self.type = type
            self.isAlive = isAlive
        }
    }

    /// The observer's id in its table, in the order observers were added.
    package var id: UInt64
    /// The observer's type name: its class, or the type of the value the table holds (a closure's wrapper).
    package var observerType: String
    /// Whether the observer owns itself (held weakly: it observes while it lives).
    package var isSelfOwned: Bool
    /// Its external owners (it is held strongly while one of them lives).
    package var owners: [Owner]
    /// Whether it observes now: not removed, and an owner (itself, when self-owned) alive.
    package var isObserving: Bool

    /// Makes an observer's inspection.
    package init(id: UInt64, observerType: String, isSelfOwned: Bool, owners: [Owner], isObserving: Bool) {
        self.id = id
        self.observerType = observerType
        self.isSelfOwned = isSelfOwned
        self.owners = owners
        self.isObserving = isObserving
    }
}

extension ObserverTable {
    /// Every observer in the table now, in the order they were added: for an inspector. Costs one lock and a copy
    /// of the table's entries; observers whose owners died since the last sweep are listed (not observing) until it
    /// settles them.
    package func inspect() -> [ObserverInspection] {
        inspect { _ in () }.map(\.observer)
    }

    /// Every observer in the table now, with what `detail` tells of each one still held (its delivery lane, say):
    /// nil only for a self-owned observer that is gone. `detail` runs outside the table's lock.
    package func inspect<Detail>(
        detail: (Observer) -> Detail
    ) -> [(observer: ObserverInspection, detail: Detail?)] {
        let snapshot = state.withLock { $0.entries }
        return withExtendedLifetime(snapshot) {
            let inspections = snapshot.filter { !$0.isEnded }.map { entry -> (ObserverInspection, Detail?) in
                let target = entry.life.isOpen ? entry.target() : nil
                // Held strongly until settled, also once its owners are gone: still described.
                let observer = entry.strong?.observer ?? target?.observer
                let inspection = ObserverInspection(
                    id: entry.id,
                    observerType: entry.object.map { String(describing: $0.type) }
                        ?? entry.strong.map { String(describing: type(of: $0.observer)) } ?? "?",
                    isSelfOwned: entry.isSelfOwned,
                    owners: entry.owners.map { .init(type: String(describing: $0.type), isAlive: $0.object != nil) },
                    isObserving: target != nil)
                return (inspection, observer.map(detail))
            }
            state.withLock { _ in }  // released after a lock: see `drain()`
            return inspections
        }
    }
}
