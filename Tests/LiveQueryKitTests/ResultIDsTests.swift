import DocumentStoreKit
import Testing
import TetherJSON
import TetherTesting

@testable import LiveQueryKit

/// After a merge, a result's `_id`s are counted again only when they may have changed: the last result's set is kept
/// only when it is the new one's.
@Suite("Live queries: a merged result's `_id`s")
struct ResultIDsTests {
    static func documents(_ ids: [String]) -> [Document] {
        ids.map { Document(StoredDocument(validatedID: $0, body: ["_id": .string($0)])) }
    }

    @Test("On 2,000 random merges — documents kept, changed ones going in and out — the set kept is always the new one")
    func keptOnlyWhenEqual() {
        var random = SeededRandom(seed: 21)
        var kept = 0
        for _ in 0..<2_000 {
            let pool = (0..<12).map { "d\($0)" }
            let previous = pool.filter { _ in random.next() < 0.5 }
            let changed = Set(pool.filter { _ in random.next() < 0.2 })
            // What a merge can make: unchanged documents of the last result, minus some pushed past a limit, and
            // changed documents that match now.
            var result = previous.filter { !changed.contains($0) && random.next() < 0.9 }
            result += changed.filter { _ in random.next() < 0.5 }
            for index in result.indices.reversed() {
                result.swapAt(index, Int(random.next() * Double(index + 1)))
            }
            let ids = LiveQueryEngine.ids(
                of: Self.documents(result), previous: Set(previous), changed: changed)
            if ids == nil { kept += 1 }
            #expect((ids ?? Set(previous)) == Set(result), "previous \(previous), changed \(changed), now \(result)")
        }
        #expect(kept > 100, "the last result's set is kept in the common case (\(kept) of 2,000)")
    }

    @Test("A full evaluation always counts its `_id`s")
    func evaluated() {
        let result = Self.documents(["a", "b"])
        #expect(LiveQueryEngine.ids(of: result, previous: ["a", "b"], changed: nil) == ["a", "b"])
    }
}
