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
        /// Entries in insertion order (ids ascending), live and ended. Snapshots share this storage until it
        /// changes. An ended entry stays, hollow, until ended entries are as many as live ones (``endedCount``),
        /// or until every entry after it has ended too: ending one then costs no move of the rest, and stopping n
        /// observers one by one costs O(n), not O(n²).
        @usableFromInline var entries: ContiguousArray<ObserverEntry<Observer>> = []
        /// How many of ``entries`` are ended.
        @usableFromInline var endedCount = 0
        /// Entry id by observer object, for class-instance observers (rule 4: identity, not a second entry).
        @usableFromInline var entryByObject: [ObjectIdentifier: UInt64] = [:]
        @usableFromInline var nextEntryID: UInt64 = 1
        @usableFromInline var jobs = JobQueue<(job: Job, ticket: UInt64)>()
        @usableFromInline var lastTicket: UInt64 = 0
        @usableFromInline var drainer = Drainer()
        @usableFromInline var mutationsSinceSweep = 0
        /// How many entries were live when the last whole sweep ended: the next comes after as many mutations.
        @usableFromInline var liveAfterSweep = 0
        /// The id of the last entry a bounded sweep settled: the next one goes on after it.
        @usableFromInline var sweptThrough: UInt64 = 0
        /// The id of the last entry a bounded check looked at (see ``ObserverTable/hasEnded(atMost:)``).
        @usableFromInline var checkedThrough: UInt64 = 0

        @inlinable
        init() {}

        /// How many entries are live.
        @inlinable
        var liveCount: Int { entries.count - endedCount }

        /// The position of the live entry with `id`, by binary search over the ascending ids; nil when it ended.
        @inlinable
        func index(of id: UInt64) -> Int? {
            var low = 0
            var high = entries.count
            while low < high {
                let mid = (low + high) / 2
                let midID = entries[mid].id
                if midID == id { return entries[mid].isEnded ? nil : mid }
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

        /// Closes a change under the lock: drops the ended entries once they are as many as the live ones, and
        /// claims the drainer role if nobody holds it. Every change that may end entries closes with it, after
        /// its last use of an index.
        @inlinable
        mutating func claimDrain(_ outcome: inout Outcome) {
            // Ended entries at the end (an observer that came and went) go at once: that moves no other entry, and
            // keeps them from lengthening every scan in between.
            while endedCount > 0, let last = entries.last, last.isEnded {
                entries.removeLast()
                endedCount -= 1
            }
            if endedCount > max(16, liveCount) {
                entries.removeAll { $0.isEnded }
                endedCount = 0
            }
            if drainer.claim(hasWork: outcome.ticket != 0) { outcome.mustDrain = true }
        }

        /// Takes the next job, or gives up the drainer role when there is none.
        @inlinable
        mutating func nextJob() -> (job: Job, ticket: UInt64)? {
            if let next = jobs.popFirst() { return next }
            drainer.release()
            return nil
        }

        /// Ends the live entry at `index`: it stops receiving at once, and its stopped notice is queued. It stays,
        /// hollow, where it is (see ``entries``).
        @inlinable
        mutating func end(
            at index: Int, last: Observer?, _ graveyard: inout Graveyard<Observer>, _ outcome: inout Outcome
        ) {
            let life = entries[index].life
            life.close()
            // Calls begin under this lock, so the ones running now are all a removal may have to wait for.
            if life.runningCalls > 0 { outcome.ended.append(life) }
            if let object = entries[index].object, entryByObject[object.id] == entries[index].id {
                entryByObject[object.id] = nil
            }
            entries[index].hollow(&graveyard)
            endedCount += 1
            if let last {
                graveyard.keep(last)
                enqueue(.stopped(last), &outcome)
            }
        }

        /// Settles the entry at `index`; returns false when it ended (now, or before).
        @inlinable
        mutating func settle(at index: Int, _ graveyard: inout Graveyard<Observer>, _ outcome: inout Outcome) -> Bool {
            guard !entries[index].isEnded else { return false }
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
            liveAfterSweep = liveCount
        }

        /// Settles up to `limit` live entries, going on from where the last bounded sweep stopped and wrapping
        /// around, so that successive calls visit every entry in turn (``ObserverTable/sweep(atMost:)``). Returns
        /// how many live entries it left without looking at them.
        @inlinable
        mutating func sweep(atMost limit: Int, _ graveyard: inout Graveyard<Observer>, _ outcome: inout Outcome)
            -> Int
        {
            guard limit < liveCount else {
                sweep(&graveyard, &outcome)
                return 0
            }
            // Room for an owner per entry checked (fewer than the table holds): grown append by append, it was
            // reallocated several times in each sweep.
            graveyard.objects.reserveCapacity(graveyard.objects.count + max(0, limit))
            var index = firstIndex(after: sweptThrough)
            var kept = 0
            var settled = 0
            // Ended entries are passed over, and counted only towards a bound on the whole pass.
            for _ in 0..<entries.count {
                guard settled < limit else { break }
                if index >= entries.count { index = 0 }
                sweptThrough = entries[index].id
                if !entries[index].isEnded {
                    settled += 1
                    if settle(at: index, &graveyard, &outcome) { kept += 1 }
                }
                index += 1
            }
            return liveCount - kept
        }

        /// Whether any of up to `limit` live entries, going on after the last one checked and wrapping around,
        /// would end if settled. Ends nothing.
        @inlinable
        mutating func hasEnded(atMost limit: Int, _ graveyard: inout Graveyard<Observer>) -> Bool {
            var index = firstIndex(after: checkedThrough)
            var checked = 0
            for _ in 0..<entries.count {
                guard checked < limit else { break }
                if index >= entries.count { index = 0 }
                checkedThrough = entries[index].id
                if !entries[index].isEnded {
                    checked += 1
                    if entries[index].wouldEnd(&graveyard) { return true }
                }
                index += 1
            }
            return false
        }

        /// Counts a mutation and sweeps once enough have accumulated that the sweep costs O(1) per mutation: as many
        /// as the entries the last sweep left live (at least 16). Counted against those, not against the live count
        /// now, which every addition raises as much as the mutations — with owners dying unnoticed between them, a
        /// table that only grows would never sweep again.
        @inlinable
        mutating func noteMutation(_ graveyard: inout Graveyard<Observer>, _ outcome: inout Outcome) {
            mutationsSinceSweep += 1
            if mutationsSinceSweep >= max(16, liveAfterSweep) {
                sweep(&graveyard, &outcome)
            }
        }
    }
}
