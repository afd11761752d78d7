import Foundation
import GRDB
import PersistenceKit

/// Opening a `DatabasePool` the way both the store and the cache do: file checks first (0600, directory), WAL,
/// busy timeout, the `tether_like` function, an optional quick check, then migrations.
enum SQLiteDatabase {
    static func open(
        path: String, configuration: SQLiteConfiguration, migrator: DatabaseMigrator
    ) throws(PersistenceError) -> DatabasePool {
        try DatabaseFile.prepare(path)
        var grdb = Configuration()
        grdb.busyMode = .timeout(configuration.busyTimeout.seconds)
        grdb.maximumReaderCount = max(1, configuration.maximumReaderCount)
        grdb.label = "tether.sqlite"
        grdb.prepareDatabase { db in
            db.add(function: likeFunction)
        }
        do {
            let pool = try DatabasePool(path: path, configuration: grdb)
            if configuration.checksIntegrityOnOpen {
                let report = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
                guard report == ["ok"] else {
                    throw PersistenceError(
                        .corrupt, "the file is damaged: quick_check reported \(report.prefix(3).joined(separator: "; "))",
                        file: path)
                }
            }
            try migrator.migrate(pool)
            return pool
        } catch {
            throw PersistenceError.mapping(error, file: path)
        }
    }

    /// `tether_like(pattern, value)`: PersistenceKit's `LikePattern`, so LIKE means the same in every store.
    static let likeFunction = DatabaseFunction("tether_like", argumentCount: 2, pure: true) { arguments in
        guard let pattern = String.fromDatabaseValue(arguments[0]),
            let value = String.fromDatabaseValue(arguments[1])
        else { return false }
        return LikePattern(pattern).matches(value)
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
