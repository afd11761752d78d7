import DocumentStoreKit
import Foundation
import GRDB
import PersistenceKit
import TetherClock

/// Opening a `DatabasePool` the way both the store and the cache do: file checks first (0600, directory), then —
/// before anything can write — a read-only inspection (an SQLite database of `schema`'s, by its application id or its
/// tables, or an empty one; the optional quick check), then WAL, busy timeout, the `tether_like` function and migrations. A file that
/// fails the inspection is refused and left byte for byte as it was.
enum SQLiteDatabase {
    static func open(
        path: String, configuration: SQLiteConfiguration, schema: any TetherSchema.Type,
        inspected: DatabaseInspection? = nil, busyWait: BusyWait? = nil
    ) throws(PersistenceError) -> DatabasePool {
        // A caller that has inspected the file already passes what it found: the quick check reads the whole file.
        let inspection =
            inspected
            ?? DatabaseInspection.inspect(path, as: schema, quickCheck: configuration.checksIntegrityOnOpen)
        if let refusal = inspection.refusal(path, role: schema.role) {
            throw refusal
        }
        try DatabaseFile.prepare(path)
        var grdb = Configuration()
        let busyWait = busyWait ?? BusyWait(timeout: configuration.busyTimeout)
        grdb.busyMode = .callback { attempt in busyWait.shouldRetry(attempt: attempt) }
        grdb.maximumReaderCount = max(1, configuration.maximumReaderCount)
        grdb.label = "tether.sqlite"
        grdb.prepareDatabase { db in
            db.add(function: likeFunction)
        }
        do {
            let pool = try DatabasePool(path: path, configuration: grdb)
            try schema.migrator.migrate(pool)
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
