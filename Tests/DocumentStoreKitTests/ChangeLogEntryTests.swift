import DocumentStoreKit
import PersistenceKit
import Testing
import TetherConcurrency

@Suite("Change log entries and their publisher")
struct ChangeLogEntryTests {
    @Test("An entry's text reads back as the same entry; text that is not an entry is corrupt, naming the commit")
    func codec() throws {
        let entry = ChangeLogEntry(
            commit: 7,
            changes: [
                .init(collection: "items", id: "a"): .inserted, .init(collection: "items", id: "b\"q"): .updated,
                .init(collection: "orders", id: "ü"): .removed,
            ])
        #expect(try ChangeLogEntry(commit: 7, encodedChanges: entry.encodedChanges) == entry)
        #expect(try ChangeLogEntry(commit: 1, encodedChanges: "{}").changes.isEmpty)
        for bad in ["", "[]", #"{"items":["a"]}"#, #"{"items":{"a":"x"}}"#, #"{"items":{"a":1}}"#] {
            #expect(throws: PersistenceError.self) { try ChangeLogEntry(commit: 9, encodedChanges: bad) }
            do {
                _ = try ChangeLogEntry(commit: 9, encodedChanges: bad)
            } catch {
                #expect(error.kind == .corrupt && error.message.contains("change log entry 9"), "\(error)")
            }
        }
    }

    @Test(
        "The publisher hands each commit to the feed once, in order; commits missing from the log go as unknown changes"
    )
    func publisher() {
        let feed = ChangeFeed()
        let published = PublishedCommits()
        let subscription = feed.subscribeInline(
            {
                published.append(
                    $0.hasUnknownChanges
                        ? "\($0.commits.lowerBound)...\($0.commits.upperBound)?" : "\($0.commits.upperBound)")
            },
            finished: {})
        let publisher = ChangeLogPublisher(feed: feed, after: 3)
        func entry(_ commit: UInt64) -> ChangeLogEntry {
            ChangeLogEntry(commit: commit, changes: [.init(collection: "c", id: "\(commit)"): .updated])
        }
        #expect(publisher.publish([2, 3, 4, 5].map(entry)) == .init(published: 2, missing: nil))
        #expect(publisher.publish([5, 6].map(entry)) == .init(published: 1, missing: nil), "5 only once")
        #expect(publisher.publish([9, 10].map(entry)) == .init(published: 2, missing: 7...8))
        #expect(publisher.lastPublished == 10)
        #expect(
            published.all == ["4", "5", "6", "7...8?", "9", "10"],
            "the missing commits as unknown changes, in their place")
        subscription.cancel()
    }
}

private final class PublishedCommits: Sendable {
    private let commits = LockedValue<[String]>([])
    func append(_ commit: String) { commits.withLock { $0.append(commit) } }
    var all: [String] { commits.withLock { $0 } }
}
