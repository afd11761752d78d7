import Logging
import PersistenceKit
import TetherConcurrency

/// The stored rows a store found it could not read as documents: counted once each, and the first thousand logged
/// by name. Queries leave them out; `document(id:)` throws `corrupt` naming them; deleting one removes it.
final class UnreadableRows: Sendable {
    /// Rows named in the log; beyond them only the count grows.
    private static let namedLimit = 1000
    /// Rows remembered, so that each is counted once however often queries meet it.
    private static let rememberedLimit = 100_000

    private let seen = LockedValue<Set<String>>([])
    private let logger: Logger
    private let file: String

    init(logger: Logger, file: String) {
        self.logger = logger
        self.file = file
    }

    /// How many distinct unreadable rows have been met (up to 100,000).
    var count: Int { seen.withLock { $0.count } }

    /// Records `error`, the failure to read one row (it names the collection and id).
    func found(_ error: PersistenceError) {
        let key = "\(error.collection ?? "")\u{0}\(error.id ?? "")"
        let number = seen.withLock { seen -> Int? in
            guard seen.count < Self.rememberedLimit, seen.insert(key).inserted else { return nil }
            return seen.count
        }
        guard let number, number <= Self.namedLimit else { return }
        logger.warning(
            "a stored document cannot be read; queries leave it out (delete it, or write it again to repair it)",
            metadata: [
                "file": "\(file)", "collection": "\(error.collection ?? "?")", "id": "\(error.id ?? "?")",
                "error": "\(error.message)", "unreadable_so_far": "\(number)",
            ])
    }
}
