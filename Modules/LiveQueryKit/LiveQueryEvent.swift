import TetherConcurrency

/// What happened between two snapshots a live-query observer received.
public enum LiveQueryEvent: Sendable, Hashable {
    /// The first snapshot; sent once, first.
    case initial
    /// A later snapshot, and how it differs from the last one this observer received.
    case update(LiveQueryUpdate)

    /// Whether this is the first snapshot.
    public var isInitial: Bool {
        if case .initial = self { true } else { false }
    }
}

/// How a snapshot differs from the previous one the observer received, by `_id`. Apply it to a list as
/// `UICollectionView`/`NSTableView` batch updates do: delete `deletions` (old indexes), insert `insertions` (new
/// indexes), reload `updates` (new indexes), move `moves`.
///
/// The indexes are computed when first asked for, once, so observers that only read the documents pay nothing for
/// them (a thousand observers of one query cost one snapshot, not a thousand diffs).
public struct LiveQueryUpdate: Sendable, Hashable {
    /// A document that kept its place in the result but moved within it.
    public struct Move: Sendable, Hashable {
        /// Its index in the old list.
        public let from: Int
        /// Its index in the new list.
        public let to: Int

        /// Makes a move.
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// The previous snapshot.
    public let oldDocuments: [Document]
    let newDocuments: [Document]
    let diff: LazyDiff

    /// Describes the difference from `old` to `new` by `_id`.
    public init(from old: [Document], to new: [Document]) {
        oldDocuments = old
        newDocuments = new
        diff = LazyDiff()
    }

    /// Indexes in the new list of documents that were not in the old.
    public var insertions: [Int] { computed.insertions }
    /// Indexes in the old list of documents that are not in the new.
    public var deletions: [Int] { computed.deletions }
    /// Indexes in the new list of documents that were in the old with different content.
    public var updates: [Int] { computed.updates }
    /// Documents in both lists whose order relative to the others changed: the fewest moves that, with the
    /// insertions and deletions, turn the old order into the new one.
    public var moves: [Move] { computed.moves }

    /// Whether nothing changed.
    public var isEmpty: Bool {
        insertions.isEmpty && deletions.isEmpty && updates.isEmpty && moves.isEmpty
    }

    var computed: Diff {
        diff.value { Diff(from: oldDocuments, to: newDocuments) }
    }

    /// Equal when both describe the same two snapshots.
    public static func == (lhs: LiveQueryUpdate, rhs: LiveQueryUpdate) -> Bool {
        lhs.oldDocuments == rhs.oldDocuments && lhs.newDocuments == rhs.newDocuments
    }

    /// Hashes the two snapshots.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(oldDocuments)
        hasher.combine(newDocuments)
    }
}

/// The indexes of an update, computed once. A struct around the lock box, which copies share: one allocation per
/// update (each observer's delivery makes one), not two.
struct LazyDiff: Sendable {
    let cache = LockedValue<Diff?>(nil)

    func value(_ compute: () -> Diff) -> Diff {
        if let known = cache.withLock({ $0 }) { return known }
        let computed = compute()
        return cache.withLock { cache in
            if let known = cache { return known }
            cache = computed
            return computed
        }
    }
}

/// Insertions, deletions, updates and moves from one list to another, by `_id`.
struct Diff: Sendable {
    let insertions: [Int]
    let deletions: [Int]
    let updates: [Int]
    let moves: [LiveQueryUpdate.Move]

    init(from old: [Document], to new: [Document]) {
        var oldIndex: [String: Int] = [:]
        oldIndex.reserveCapacity(old.count)
        for (index, document) in old.enumerated() { oldIndex[document.id] = index }
        var newIDs = Set<String>()
        newIDs.reserveCapacity(new.count)
        var insertions: [Int] = []
        var updates: [Int] = []
        // Old indexes of the documents in both lists, in the new list's order.
        var kept: [(old: Int, new: Int)] = []
        for (index, document) in new.enumerated() {
            newIDs.insert(document.id)
            guard let previous = oldIndex[document.id] else {
                insertions.append(index)
                continue
            }
            kept.append((previous, index))
            if old[previous].value != document.value { updates.append(index) }
        }
        deletions = old.indices.filter { !newIDs.contains(old[$0].id) }
        self.insertions = insertions
        self.updates = updates
        // The longest run of kept documents already in order stays; the others moved.
        let staying = Self.longestIncreasingSubsequence(kept.map(\.old))
        moves = kept.indices.filter { !staying.contains($0) }.map {
            LiveQueryUpdate.Move(from: kept[$0].old, to: kept[$0].new)
        }
    }

    /// The positions (in `values`) of one longest strictly increasing subsequence. O(n log n).
    static func longestIncreasingSubsequence(_ values: [Int]) -> Set<Int> {
        var tails: [Int] = []  // positions of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var result = Set<Int>()
        var position = tails.last ?? -1
        while position >= 0 {
            result.insert(position)
            position = previous[position]
        }
        return result
    }
}
