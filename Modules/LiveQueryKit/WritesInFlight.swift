import Synchronization

/// The store's writes in flight: each of ``Store``'s writes is counted from before its transaction begins (waiting for
/// the writer included) until it has committed — its changes handed to the engine — or rolled back.
///
/// From the change feed alone, a commit that runs long (one that checkpoints SQLite's write-ahead log takes about
/// 2 ms) looks like a writer that has stopped. The engine computes no result ahead of a busy observer's signal while
/// a write is in flight: the commit coming would leave it out of date. Writes made on the `DocumentStore` directly, or
/// by another process, are not counted; the engine's window after the last commit covers those.
final class WritesInFlight: Sendable {
    private let count = Atomic<Int>(0)

    /// Runs `body`, a write, counted while it runs.
    func counting<T>(_ body: () async throws -> T) async rethrows -> T {
        count.add(1, ordering: .relaxed)
        defer { count.subtract(1, ordering: .relaxed) }
        return try await body()
    }

    /// Whether a write is in flight.
    var isWriting: Bool {
        count.load(ordering: .relaxed) > 0
    }
}
