import Foundation
import Testing
import TetherConcurrency
import TetherTestingTraits

@Suite("LockedValue", .onDedicatedThread)
struct LockedValueTests {
    @Test("Updates from many threads are mutually exclusive")
    func mutualExclusion() {
        let counter = LockedValue(0)
        let done = DispatchGroup()
        for _ in 0..<8 {
            done.enter()
            Thread {
                for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
                done.leave()
            }.start()
        }
        done.wait()
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test("A throwing body leaves the lock released")
    func throwingBodyUnlocks() {
        struct Failure: Error {}
        let value = LockedValue([1])
        #expect(throws: Failure.self) { try value.withLock { _ in throw Failure() } }
        #expect(value.withLock { $0 } == [1])
    }
}
