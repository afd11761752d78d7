import DocumentStoreKit
import Testing
import TetherConcurrency

@Suite("ChangeFeed: subscribers and the feed's end")
struct ChangeFeedTests {
    static let key = ChangeSet.Key(collection: "items", id: "a")

    @Test("Every subscriber gets a commit; after finish, a new subscriber is finished at once, never left waiting")
    func subscribeAfterFinish() async {
        let feed = ChangeFeed()
        let received = LockedValue<[UInt64]>([])
        let first = feed.subscribeInline(
            { set in received.withLock { $0.append(set.commits.upperBound) } }, finished: {})
        feed.publish([Self.key: .inserted], commit: 1)
        #expect(received.withLock { $0 } == [1])
        #expect(feed.subscriberCount == 1)
        feed.finish()
        #expect(feed.subscriberCount == 0)
        let ended = LockedValue(false)
        let late = feed.subscribeInline({ _ in }, finished: { ended.withLock { $0 = true } })
        #expect(ended.withLock { $0 })
        #expect(feed.subscriberCount == 0)
        var stream = feed.stream().makeAsyncIterator()
        #expect(await stream.next() == nil)
        first.cancel()
        late.cancel()
    }

    @Test("A cancelled subscriber gets no later commit; the others still do")
    func cancelOne() {
        let feed = ChangeFeed()
        let counts = LockedValue([0, 0])
        let a = feed.subscribeInline({ _ in counts.withLock { $0[0] += 1 } }, finished: {})
        let b = feed.subscribeInline({ _ in counts.withLock { $0[1] += 1 } }, finished: {})
        feed.publish([Self.key: .inserted], commit: 1)
        a.cancel()
        feed.publish([Self.key: .updated], commit: 2)
        #expect(counts.withLock { $0 } == [1, 2])
        #expect(feed.subscriberCount == 1)
        b.cancel()
    }
}
