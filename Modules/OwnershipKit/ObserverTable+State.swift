public import TetherConcurrency

extension ObserverTable {
    /// One unit of delivery work, run in order by whichever thread is draining. Indirect, so that moving one
    /// through the queue moves a pointer.
    @usableFromInline
    indirect enum Job: Sendable {
        /// The added notice for one new entry.
        case added(ObserverEntry<Observer>)
        /// An event for the entries that existed when it was posted.
        case event(Event, ContiguousArray<ObserverEntry<Observer>>)
        /// The last notice for an entry that ended.
        case stopped(Observer)
    }

    /// What a mutation under the lock leaves for the caller to do once the lock is released.
    @usableFromInline
    struct Outcome {
        /// The ticket of the last job enqueued, 0 when none.
        @usableFromInline var ticket: UInt64 = 0
        /// Whether the caller became the drainer and must drain now.
        @usableFromInline var mustDrain = false
        /// For removals: the last ticket queued when the lock was released. Whoever queued them (this call, or a
        /// sweep on another thread that saw the same owner die first), the removal returns only once they are
        /// delivered, so the observers it concerns have had their stopped notices and receive nothing more.
        @usableFromInline var waitTicket: UInt64 = 0
        /// For removals: the entries this call ended that had calls running outside the table, to be waited out.
        @usableFromInline var ended = EndedCalls.none

        @inlinable
        init() {}
    }

    /// Everything the lock protects.
    @usableFromInline
    struct State: Sendable {
        /// Live entries in insertion order (ids ascending). Snapshots share this storage until it changes.
        @usableFromInline var entries: ContiguousArray<ObserverEntry<Observer>> = []
        /// Entry id by observer object, for class-instance observers (rule 4: identity, not a second entry).
        @usableFromInline var entryByObject: [ObjectIdentifier: UInt64] = [:]
        @usableFromInline var nextEntryID: UInt64 = 1
        @usableFromInline var jobs = JobQueue<(job: Job, ticket: UInt64)>()
        @usableFromInline var lastTicket: UInt64 = 0
        @usableFromInline var drainer = Drainer()
        @usableFromInline var mutationsSinceSweep = 0
        /// The id of the last entry a bounded sweep settled: the next one goes on after it.
        @usableFromInline var sweptThrough: UInt64 = 0
        /// The id of the last entry a bounded check looked at (see ``ObserverTable/hasEnded(atMost:)``).
        @usableFromInline var checkedThrough: UInt64 = 0

        @inlinable
        init() {}

        /// The position of the entry with `id`, by binary search over the ascending ids.
        @inlinable
        func index(of id: UInt64) -> Int? {
            var low = 0
            var high = entries.count
            while low < high {
                let mid = (low + high) / 2
                let midID = entries[mid].id
                if midID == id { return mid }
                if midID < id { low = mid + 1 } else { high = mid }
            }
            return nil
        }

        /// The position of the first entry whose id is greater than `id` (ids ascend), or the count when none is:
        /// where a bounded pass that stopped at `id` goes on.
        @inlinable
        func firstIndex(after id: UInt64) -> Int {
            var low = 0
            var high = entries.count
            while low < high {
                let mid = (low + high) / 2
                if entries[mid].id <= id { low = mid + 1 } else { high = mid }
            }
            return low
        }

        @inlinable
        mutating func enqueue(_ job: Job, _ outcome: inout Outcome) {
            lastTicket += 1
            jobs.append((job, lastTicket))
            outcome.ticket = lastTicket
        }

        /// Claims the drainer role if nobody holds it.
        @inlinable
        mutating func claimDrain(_ outcome: inout Outcome) {
            if drainer.claim(hasWork: outcome.ticket != 0) { outcome.mustDrain = true }
        }

        /// Takes the next job, or gives up the drainer role when there is none.
        @inlinable
        mutating func nextJob() -> (job: Job, ticket: UInt64)? {
            if let next = jobs.popFirst() { return next }
            drainer.release()
            return nil
        }

        /// Ends the entry at `index`: it stops receiving at once, and its stopped notice is queued.
        @inlinable
        mutating func end(
            at index: Int, last: Observer?, _ graveyard: inout Graveyard<Observer>, _ outcome: inout Outcome
        ) {
            let entry = entries.remove(at: index)
            entry.life.close()
            // Calls begin under this lock, so the ones running now are all a removal may have to wait for.
            if entry.life.runningCalls > 0 { outcome.ended.append(entry.life) }
            if let object = entry.object, entryByObject[object.id] == entry.id {
                entryByObject[object.id] = nil
            }
            if let last {
                graveyard.keep(last)
                enqueue(.stopped(last), &outcome)
            }
        }

        /// Settles the entry at `index`; returns false when it ended (and was removed).
        @inlinable
        mutating func settle(at index: Int, _ graveyard: inout Graveyard<Observer>, _ outcome: inout Outcome) -> Bool {
            switch entries[index].settle(&graveyard) {
            case .observing:
                return true
            case .ended(let last):
                end(at: index, last: last, &graveyard, &outcome)
                return false
            }
        }

        /// Settles every entry: ends those whose owners are all gone (rule 6, in bulk).
        @inlinable
        mutating func sweep(_ graveyard: inout Graveyard<Observer>, _ outcome: inout Outcome) {
            mutationsSinceSweep = 0
            var index = entries.count - 1
            while index >= 0 {
                _ = settle(at: index, &graveyard, &outcome)
                index -= 1
            }
        }

        /// Settles up to `limit` entries, going on from where the last bounded sweep stopped and wrapping around, so
        /// that successive calls visit every entry in turn (``ObserverTable/sweep(atMost:)``). Returns how many
        /// entries it left without looking at them.
        @inlinable
        mutating func sweep(atMost limit: Int, _ graveyard: inout Graveyard<Observer>, _ outcome: inout Outcome)
            -> Int
        {
            guard limit < entries.count else {
                sweep(&graveyard, &outcome)
                return 0
            }
            var index = firstIndex(after: sweptThrough)
            var kept = 0
            for _ in 0..<limit {
                guard !entries.isEmpty else { return 0 }
                if index >= entries.count { index = 0 }
                sweptThrough = entries[index].id
                if settle(at: index, &graveyard, &outcome) {
                    index += 1
                    kept += 1
                }
            }
            return entries.count - kept
        }

        /// Whether any of up to `limit` entries, going on after the last one checked and wrapping around, would
        /// end if settled. Ends nothing.
        @inlinable
        mutating func hasEnded(atMost limit: Int, _ graveyard: inout Graveyard<Observer>) -> Bool {
            guard !entries.isEmpty else { return false }
            var index = firstIndex(after: checkedThrough)
            for _ in 0..<min(limit, entries.count) {
                if index >= entries.count { index = 0 }
                checkedThrough = entries[index].id
                if entries[index].wouldEnd(&graveyard) { return true }
                index += 1
            }
            return false
        }

        /// Counts a mutation and sweeps once enough have accumulated that the sweep costs O(1) per mutation.
        @inlinable
        mutating func noteMutation(_ graveyard: inout Graveyard<Observer>, _ outcome: inout Outcome) {
            mutationsSinceSweep += 1
            if mutationsSinceSweep >= max(16, entries.count) {
                sweep(&graveyard, &outcome)
            }
        }
    }
}
