import LiveQueryKit
import TetherConcurrency
import TetherJSON

/// Counts the consumer's results alive — view models, made from a live query's documents and freed by their
/// `deinit` — and their bytes: what piles up when deliveries outrun the consumer, measured apart from the store's
/// own memory (page cache, WAL) and the allocator's, which resident memory mixes in.
final class ResultTally: Sendable {
    struct Counts: Sendable, Equatable {
        /// Results alive now.
        var alive = 0
        /// Their bytes.
        var bytes = 0
        /// The most alive at once since the last reset.
        var mostAlive = 0
        /// The most bytes alive at once since the last reset.
        var mostBytes = 0
    }

    private let counts = LockedValue(Counts())

    /// Now, and the most since ``reset()``.
    var now: Counts { counts.withLock { $0 } }

    /// Starts a run: the high-water marks restart from what is alive now.
    func reset() {
        counts.withLock {
            $0.mostAlive = $0.alive
            $0.mostBytes = $0.bytes
        }
    }

    fileprivate func made(bytes: Int) {
        counts.withLock { counts in
            counts.alive += 1
            counts.bytes += bytes
            counts.mostAlive = max(counts.mostAlive, counts.alive)
            counts.mostBytes = max(counts.mostBytes, counts.bytes)
        }
    }

    fileprivate func freed(bytes: Int) {
        counts.withLock { counts in
            counts.alive -= 1
            counts.bytes -= bytes
        }
    }
}

/// What the consumer renders: one row of text per document (its JSON), as a screen's list would hold. Counted by
/// a ``ResultTally`` from `init` to `deinit`.
final class ItemsViewModel: Sendable {
    let rows: [String]
    /// The rows' bytes (UTF-8).
    let bytes: Int
    /// Each document's quantity, by id: what the consumer checks the final state with.
    let quantities: [String: JSONValue]
    private let tally: ResultTally

    init(_ documents: [Document], tally: ResultTally) {
        rows = documents.map { $0.value.jsonText }
        bytes = rows.reduce(0) { $0 + $1.utf8.count }
        quantities = Dictionary(uniqueKeysWithValues: documents.map { ($0.id, $0.value["quantity"] ?? .null) })
        self.tally = tally
        tally.made(bytes: bytes)
    }

    deinit {
        tally.freed(bytes: bytes)
    }
}
