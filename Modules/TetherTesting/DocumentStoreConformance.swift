public import DocumentStoreKit
import PersistenceKit
import TetherConcurrency
import TetherJSON

/// The rules every `DocumentStore` must follow, as checks any store can run — ours (in memory,
/// SQLite) or yours. Each check gets a fresh, empty store.
///
/// ```swift
/// @Test(arguments: DocumentStoreConformance.checks)
/// func conformance(_ check: DocumentStoreCheck) async throws {
///     try await check.run(on: MyDocumentStore(…))
/// }
/// ```
public enum DocumentStoreConformance {
    /// Every check.
    public static let checks: [DocumentStoreCheck] =
        basicChecks + feedChecks + badInputChecks + queryChecks + indexChecks + randomQueryChecks
}

/// One rule, runnable against a store.
public struct DocumentStoreCheck: Sendable, CustomStringConvertible {
    /// A short name (`insert-duplicate-fails`).
    public let name: String
    /// What the rule says.
    public let rule: String
    let body: @Sendable (any DocumentStore) async throws -> Void

    init(_ name: String, _ rule: String, body: @escaping @Sendable (any DocumentStore) async throws -> Void) {
        self.name = name
        self.rule = rule
        self.body = body
    }

    /// Runs the check.
    ///
    /// - Throws: ``DocumentStoreConformanceFailure`` saying what the store did instead, or what the store threw.
    public func run(on store: any DocumentStore) async throws {
        try await body(store)
    }

    /// The name.
    public var description: String { name }
}

/// A store broke a rule.
public struct DocumentStoreConformanceFailure: Error, Sendable, CustomStringConvertible {
    /// What happened instead.
    public let description: String
}

func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw DocumentStoreConformanceFailure(description: message()) }
}

/// Runs `body`, which must throw a `PersistenceError` of `kind`; returns it.
@discardableResult
func expectError(
    _ kind: PersistenceError.Kind, _ what: String, _ body: () async throws -> Void
) async throws -> PersistenceError {
    do {
        try await body()
    } catch let error as PersistenceError {
        try require(error.kind == kind, "\(what): expected \(kind), got \(error)")
        return error
    } catch {
        throw DocumentStoreConformanceFailure(description: "\(what): expected PersistenceError.\(kind), got \(error)")
    }
    throw DocumentStoreConformanceFailure(description: "\(what): expected PersistenceError.\(kind), nothing was thrown")
}

/// Collects change sets from a store's feed, for checks.
final class FeedRecorder: Sendable {
    let sets: LockedValue<[ChangeSet]>
    let subscription: ChangeSubscription

    init(_ store: any DocumentStore) {
        let sets = LockedValue<[ChangeSet]>([])
        self.sets = sets
        subscription = store.changes.subscribe { set in sets.withLock { $0.append(set) } }
    }

    /// Waits (up to 5 s) until `count` sets arrived; returns them.
    func waitFor(_ count: Int) async throws -> [ChangeSet] {
        for _ in 0..<500 {
            let current = sets.withLock { $0 }
            if current.count >= count { return current }
            try await Task.sleep(for: .milliseconds(10))
        }
        let current = sets.withLock { $0 }
        throw DocumentStoreConformanceFailure(
            description: "expected \(count) change sets, got \(current.count): \(current)")
    }
}
