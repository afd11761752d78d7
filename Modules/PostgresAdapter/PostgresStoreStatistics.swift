import TetherConcurrency

/// What a ``PostgresDocumentStore`` has sent the server since it was made: for benchmarks and for seeing what a
/// live query costs the database (every observer of a process shares one listener and one read per round).
public struct PostgresStoreStatistics: Sendable, Hashable, CustomStringConvertible {
    /// SQL statements sent, `BEGIN` and `COMMIT` included, on every connection the store uses.
    public var statements = 0
    /// Read transactions (`read(_:)`: queries, live queries' evaluations and reads of changed documents).
    public var reads = 0
    /// Write transactions committed or rolled back.
    public var writes = 0
    /// Reads of the change log by the listener (each brings every commit after the last one it published).
    public var catchUps = 0
    /// Connections the listener opened: 1, plus one per reconnection after losing one.
    public var listenerConnections = 0

    /// Zero counts.
    public init() {}

    public var description: String {
        "\(statements) statements (\(reads) reads, \(writes) writes, \(catchUps) change-log reads, "
            + "\(listenerConnections) listener connections)"
    }
}

/// The counters behind ``PostgresDocumentStore/statistics``, shared by every session of one store.
final class PostgresCounters: Sendable {
    private let counts = LockedValue(PostgresStoreStatistics())

    func count(_ counter: any WritableKeyPath<PostgresStoreStatistics, Int> & Sendable) {
        counts.withLock { $0[keyPath: counter] += 1 }
    }

    var statistics: PostgresStoreStatistics { counts.withLock { $0 } }
}
