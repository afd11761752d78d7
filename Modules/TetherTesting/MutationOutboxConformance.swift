import Dispatch
import Foundation
public import MutationOutboxKit
import PersistenceKit

/// The rules every `MutationOutbox` must follow, as checks any outbox can run — ours (in memory, SQLite) or yours.
/// Each check gets a fresh, empty outbox.
///
/// ```swift
/// @Test(arguments: MutationOutboxConformance.checks)
/// func conformance(_ check: MutationOutboxCheck) async throws {
///     try await check.run(on: MyMutationOutbox(…))
/// }
/// ```
public enum MutationOutboxConformance {
    /// An entry with `key`, made `seconds` after the epoch, with every field set.
    public static func entry(_ key: String, lane: String = "https://api.test/items", seconds: Double = 1)
        -> OutboxEntry
    {
        OutboxEntry(
            key: key, lane: lane, method: "POST", url: lane,
            headers: [
                .init(name: "Idempotency-Key", value: key), .init(name: "Content-Type", value: "application/json"),
                .init(name: "X-Unicode", value: "Grüße, 世界"),
            ],
            body: Data("{\"name\":\"\(key)\"}".utf8), optimisticUpdate: "append-item", usesResponse: true,
            invalidates: ["/stores/*/items", "@all"], enqueued: Date(timeIntervalSince1970: seconds))
    }

    /// Every check.
    public static let checks: [MutationOutboxCheck] = [
        MutationOutboxCheck("round-trip", "an entry reads back exactly, with the sequence number enqueue gave") {
            outbox in
            var written = entry("a")
            written.sequence = try outbox.enqueue(written)
            try require(written.sequence > 0, "a sequence number is positive")
            let read = try outbox.pendingEntries()
            try require(read == [written], "read \(read), wrote \(written)")
            var bare = OutboxEntry(
                key: "b", lane: "", method: "DELETE", url: "https://api.test/x", headers: [], body: nil,
                optimisticUpdate: nil, usesResponse: false, invalidates: [], enqueued: Date(timeIntervalSince1970: 0))
            bare.sequence = try outbox.enqueue(bare)
            try require(try outbox.pendingEntries().last == bare, "no body, no headers, no update read back as such")
        },
        MutationOutboxCheck("order", "entries come back in the order they were written, numbers rising") { outbox in
            var numbers: [Int64] = []
            for index in 0..<50 { numbers.append(try outbox.enqueue(entry("k\(index)", seconds: Double(50 - index)))) }
            try require(numbers == numbers.sorted() && Set(numbers).count == 50, "numbers rise: \(numbers)")
            let keys = try outbox.pendingEntries().map(\.key)
            try require(keys == (0..<50).map { "k\($0)" }, "in order written, not by date: \(keys)")
        },
        MutationOutboxCheck(
            "take", "an outbox object takes what it enqueued, in order, again and again; not failed ones"
        ) { outbox in
            for key in ["a", "b", "c"] { _ = try outbox.enqueue(entry(key)) }
            try outbox.markFailed(key: "b", reason: "refused")
            try require(try outbox.takePending().map(\.key) == ["a", "c"], "its own pending entries")
            try require(try outbox.takePending().map(\.key) == ["a", "c"], "taking again takes the same")
        },
        MutationOutboxCheck("numbers never reused", "after the newest entry is removed, the next number is higher") {
            outbox in
            let first = try outbox.enqueue(entry("a"))
            try outbox.remove(key: "a")
            let second = try outbox.enqueue(entry("b"))
            try require(second > first, "\(second) after \(first)")
        },
        MutationOutboxCheck("duplicate key", "a key written twice is refused, and the first entry stays") { outbox in
            _ = try outbox.enqueue(entry("a"))
            var other = entry("a")
            other.url = "https://api.test/other"
            do {
                _ = try outbox.enqueue(other)
                throw MutationOutboxConformanceFailure(description: "the second enqueue should have thrown")
            } catch let error as PersistenceError {
                try require(error.kind == .duplicateID, "kind \(error.kind)")
            }
            try require(try outbox.pendingEntries().map(\.url) == ["https://api.test/items"], "the first stays")
        },
        MutationOutboxCheck("failed list", "markFailed moves an entry out of pending, with why; clearing empties it") {
            outbox in
            for key in ["a", "b", "c"] { _ = try outbox.enqueue(entry(key)) }
            try outbox.markFailed(key: "b", reason: "httpStatus(409): Conflict")
            try require(try outbox.pendingEntries().map(\.key) == ["a", "c"], "b is out of the pending list")
            let failed = try outbox.failedEntries()
            try require(
                failed.map(\.key) == ["b"] && failed.first?.failure == "httpStatus(409): Conflict",
                "b is failed, with why: \(failed)")
            try outbox.markFailed(key: "missing", reason: "x")
            try outbox.removeFailedEntries()
            try require(try outbox.failedEntries().isEmpty, "the failed list is empty")
            try require(try outbox.pendingEntries().map(\.key) == ["a", "c"], "pending entries stay")
        },
        MutationOutboxCheck("remove", "remove takes one entry, pending or failed; a missing key is fine") { outbox in
            for key in ["a", "b"] { _ = try outbox.enqueue(entry(key)) }
            try outbox.markFailed(key: "b", reason: "refused")
            try outbox.remove(key: "a")
            try outbox.remove(key: "b")
            try outbox.remove(key: "never-written")
            try require(try outbox.pendingEntries().isEmpty && outbox.failedEntries().isEmpty, "both are gone")
        },
        MutationOutboxCheck("hostile text", "keys, URLs and bodies are only data: quotes, SQL, NUL bytes, 1 MB") {
            outbox in
            var written = entry("'); DROP TABLE tether_outbox; --")
            written.url = "https://api.test/a?q=\"x\"&b='y'"
            written.body = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            written.sequence = try outbox.enqueue(written)
            try require(try outbox.pendingEntries() == [written], "read back exactly")
        },
    ]

    static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        guard condition else { throw MutationOutboxConformanceFailure(description: message()) }
    }
}

/// One rule of ``MutationOutboxConformance``.
public struct MutationOutboxCheck: Sendable, CustomStringConvertible {
    /// A short name.
    public let name: String
    /// What it checks.
    public let summary: String
    let body: @Sendable (any MutationOutbox) throws -> Void

    init(_ name: String, _ summary: String, _ body: @escaping @Sendable (any MutationOutbox) throws -> Void) {
        self.name = name
        self.summary = summary
        self.body = body
    }

    /// Runs the check on `outbox`, which must be empty, on a dispatch queue of its own: an outbox may block.
    ///
    /// - Throws: ``MutationOutboxConformanceFailure`` saying what the outbox did instead, or what it threw.
    public func run(on outbox: any MutationOutbox) async throws {
        let body = body
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue(label: "tether.testing.mutation-outbox-check").async {
                continuation.resume(with: Result { try body(outbox) })
            }
        }
    }

    /// The name.
    public var description: String { name }
}

/// A rule of ``MutationOutboxConformance`` broken: which, and how.
public struct MutationOutboxConformanceFailure: Error, CustomStringConvertible {
    /// What was wrong.
    public let description: String
}
