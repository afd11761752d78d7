public import Logging

/// How a SQLite store or cache opens its file. The defaults suit an app or a service.
public struct SQLiteConfiguration: Sendable {
    /// How long a write waits for another connection's lock before failing with
    /// `PersistenceError.Kind.busy`. Default 5 seconds.
    public var busyTimeout: Duration = .seconds(5)
    /// How many connections read at once (a `DatabasePool` in WAL mode: readers never wait for the writer).
    /// Default 5.
    public var maximumReaderCount = 5
    /// Whether opening runs `PRAGMA quick_check`, so a damaged file is found at once rather than at a later read.
    /// It reads the whole file: about 0.1 s per 100 MB here. Default true.
    public var checksIntegrityOnOpen = true
    /// Where warnings go (a damaged cache moved aside, a failed write).
    public var logger = Logger(label: "tether.persistence.sqlite")
    /// How long a process that follows the store's change log
    /// (``SQLiteDocumentStore/followOtherProcesses(checkingEvery:)``) may go unseen before its entries are no longer
    /// kept for it. Default 10 minutes.
    public var changeLogRetention: Duration = .seconds(600)
    /// How long every change-log entry is kept at least, so that a process that has just opened the file and is
    /// about to follow it finds every commit since it opened. Default 5 seconds: the log of a busy single process
    /// stays small (at 8,000 commits a second, about 40,000 entries), and a follower that starts later loses
    /// nothing either — the commits it missed reach its feed as unknown changes, and its live queries run again.
    public var changeLogMinimumAge: Duration = .seconds(5)

    /// Makes the defaults.
    public init() {}
}
