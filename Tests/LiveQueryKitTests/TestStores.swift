import DocumentStoreKit
import Foundation
import LiveQueryKit
import SQLiteAdapter
import TetherClock
import TetherConcurrency
import TetherTesting

/// Stores for tests: in memory, and on a temporary SQLite file (removed when the process ends… or left in /tmp).
enum TestStores {
    static func sqlite(
        quietPeriod: Duration? = nil, anticipatesSignals: Bool = true, timeSource: any TimeSource = .system
    ) throws -> Store {
        Store(
            try SQLiteDocumentStore(path: temporaryPath()),
            configuration: .init(
                quietPeriod: quietPeriod, anticipatesSignals: anticipatesSignals, timeSource: timeSource))
    }

    /// A path for a new SQLite file in a directory of its own, removed when the process ends.
    static func temporaryPath() throws -> String {
        let directory = NSTemporaryDirectory() + "tether-livequery-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        TemporaryFiles.shared.add(directory)
        return directory + "/store.sqlite"
    }

    /// The document store alone, of either kind: to wrap in a test double.
    static func documents(_ kind: String) throws -> any DocumentStore {
        kind == "sqlite" ? try SQLiteDocumentStore(path: temporaryPath()) : InMemoryDocumentStore()
    }

    /// Both kinds, for parameterized tests.
    static let kinds = ["memory", "sqlite"]

    /// A store of either kind. `quietPeriod` nil and `anticipatesSignals` false: held-back results are computed only
    /// when an observer signals (for tests that count the work done while observers are busy).
    static func make(
        _ kind: String, quietPeriod: Duration? = nil, anticipatesSignals: Bool = true,
        timeSource: any TimeSource = .system
    ) throws -> Store {
        kind == "sqlite"
            ? try sqlite(quietPeriod: quietPeriod, anticipatesSignals: anticipatesSignals, timeSource: timeSource)
            : Store.inMemory(
                configuration: .init(
                    quietPeriod: quietPeriod, anticipatesSignals: anticipatesSignals, timeSource: timeSource))
    }
}

/// What an observer received, in order.
final class Received: Sendable {
    let entries = LockedValue<[(ids: [String], event: LiveQueryEvent)]>([])

    func append(_ documents: [Document], _ event: LiveQueryEvent) {
        entries.withLock { $0.append((documents.map(\.id), event)) }
    }

    var all: [(ids: [String], event: LiveQueryEvent)] { entries.withLock { $0 } }
    var count: Int { entries.withLock { $0.count } }
    var last: [String]? { entries.withLock { $0.last?.ids } }

    /// Waits (up to 30 s: a deadline for correctness, generous for a sanitizer on a loaded machine) until
    /// `condition` holds.
    func wait(until condition: @Sendable (Received) -> Bool) async throws {
        do {
            try await eventually { condition(self) }
        } catch {
            struct Timeout: Error, CustomStringConvertible { let description: String }
            throw Timeout(
                description:
                    "\(error); received \(all.map { "\($0.ids) \($0.event.isInitial ? "initial" : "update")" })")
        }
    }
}
