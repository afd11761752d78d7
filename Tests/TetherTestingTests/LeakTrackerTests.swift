import OwnershipKit
import Testing
import TetherTesting

@Suite("LeakTracker")
struct LeakTrackerTests {
    final class Node {
        var next: Node?
    }

    @Test("Reports nothing once tracked objects are gone")
    func releasedObjectsAreNotSurvivors() {
        let tracker = LeakTracker()
        do {
            let node = tracker.track(Node(), "node")
            withExtendedLifetime(node) { #expect(tracker.survivors == ["node"]) }
        }
        #expect(tracker.survivors.isEmpty)
        #expect(tracker.trackedCount == 1)
    }

    @Test("Reports a retain cycle by label")
    func cycleIsReported() {
        let tracker = LeakTracker()
        do {
            let a = tracker.track(Node(), "a")
            let b = tracker.track(Node(), "b")
            a.next = b
            b.next = a
        }
        #expect(tracker.survivors == ["a", "b"])
    }
}

@Suite("RecordingObserver")
struct RecordingObserverTests {
    @Test("Records notices in order and runs its reaction after recording")
    func recordsAndReacts() {
        let seen = RecordingObserver<String>("seen")
        let observer = RecordingObserver<String>("main") { seen.receive($0) }
        observer.receive(.added)
        observer.receive(.event("a"))
        observer.receive(.stopped)
        #expect(observer.notices == [.added, .event("a"), .stopped])
        #expect(observer.events == ["a"])
        #expect(observer.addedCount == 1)
        #expect(observer.stoppedCount == 1)
        #expect(seen.notices == observer.notices)
        observer.reset()
        #expect(observer.notices.isEmpty)
    }
}
