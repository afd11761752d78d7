import OwnershipKit
import Testing
import TetherConcurrency
import TetherTesting

/// The observer kind the rule tests use: an existential, as `ResourceKit` and `LiveQueryKit` use theirs.
protocol Listener: Sendable {
    func hear(_ notice: ObserverNotice<Int>)
}

extension RecordingObserver: Listener where Event == Int {
    func hear(_ notice: ObserverNotice<Int>) { receive(notice) }
}

/// A struct observer wrapping a closure: never deduplicated.
struct ClosureListener: Listener {
    let body: @Sendable (ObserverNotice<Int>) -> Void
    func hear(_ notice: ObserverNotice<Int>) { body(notice) }
}

/// An owner: any object will do.
final class Owner: Sendable {
    let name: String
    init(_ name: String = "owner") { self.name = name }
}

typealias Table = ObserverTable<any Listener, Int>

func makeTable() -> Table {
    Table { listener, notice in listener.hear(notice) }
}

typealias Recorder = RecordingObserver<Int>

/// Runs `body`, then checks that every object it tracked has been deallocated: retain cycles fail the test.
func expectNoLeaks(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (LeakTracker) throws -> Void
) rethrows {
    let tracker = LeakTracker()
    try body(tracker)
    #expect(tracker.survivors.isEmpty, "still alive: \(tracker.survivors)", sourceLocation: sourceLocation)
    #expect(tracker.trackedCount > 0, "the test tracked nothing", sourceLocation: sourceLocation)
}

/// A thread-safe list, for logs written from callbacks.
final class Log<Element: Sendable>: Sendable {
    private let items = LockedValue<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
    func removeAll() {
        let removed = items.withLock { items in
            defer { items.removeAll() }
            return items
        }
        _ = removed  // released here, outside the lock
    }
}
