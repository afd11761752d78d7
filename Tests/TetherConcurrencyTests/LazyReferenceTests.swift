import Dispatch
import Testing
import TetherConcurrency

@Suite("LazyReference: made once by whichever thread gets there first, released with the reference")
struct LazyReferenceTests {
    final class Box: Sendable {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test("Nothing before the first store; the first store wins and later ones get it back")
    func firstWins() {
        let reference = LazyReference<Box>()
        #expect(reference.load() == nil)
        let first = reference.storeIfNil(Box(1))
        let second = reference.storeIfNil(Box(2))
        #expect(first.value == 1)
        #expect(second === first)
        #expect(reference.load() === first)
    }

    final class CountedBox: Sendable {
        let value: Int
        let released: LockedValue<Int>
        init(_ value: Int, released: LockedValue<Int>) {
            self.value = value
            self.released = released
        }
        deinit { released.withLock { $0 += 1 } }
    }

    @Test("Eight threads racing: all get the same instance, and every loser's instance is released at once")
    func racing() {
        let released = LockedValue(0)
        let results = LockedValue([Int: ObjectIdentifier]())
        let reference = LazyReference<CountedBox>()
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let box = reference.storeIfNil(CountedBox(index, released: released))
            results.withLock { $0[index] = ObjectIdentifier(box) }
        }
        let winners = results.withLock { Set($0.values) }
        #expect(results.withLock { $0.count } == 8)
        #expect(winners.count == 1)
        #expect(winners.first == reference.load().map(ObjectIdentifier.init))
        #expect(released.withLock { $0 } == 7)
    }

    @Test("The stored instance is released with the reference")
    func releasedWithReference() {
        weak var stored: Box?
        do {
            let reference = LazyReference<Box>()
            stored = reference.storeIfNil(Box(7))
            #expect(stored?.value == 7)
        }
        #expect(stored == nil)
    }
}
