import TetherConcurrency
import OwnershipKit

/// Finds retain cycles and leaked observers deterministically: track objects as a test makes them, then ask
/// which are still alive once the test has let go of them.
///
/// Deallocation in Swift is synchronous, so no waiting or timing is involved:
///
/// ```swift
/// let tracker = LeakTracker()
/// do {
///     let owner = tracker.track(Owner(), "owner")
///     table.add(tracker.track(Recorder(), "observer"), owner: owner)
/// }
/// table.sweep()
/// #expect(tracker.survivors.isEmpty)
/// ```
public final class LeakTracker: Sendable {
    private let tracked = LockedValue<[(label: String, reference: WeakReference)]>([])

    /// Makes a tracker that tracks nothing yet.
    public init() {}

    /// Tracks `object` under `label` and returns it.
    @discardableResult
    public func track<Object: AnyObject>(_ object: Object, _ label: String? = nil) -> Object {
        let reference = WeakReference(object)
        let label = label ?? String(describing: Object.self)
        tracked.withLock { $0.append((label, reference)) }
        return object
    }

    /// How many objects have been tracked.
    public var trackedCount: Int {
        tracked.withLock { $0.count }
    }

    /// The labels of tracked objects that are still alive, in the order they were tracked.
    public var survivors: [String] {
        let all = tracked.withLock { $0 }
        return all.filter { $0.reference.object != nil }.map(\.label)
    }
}
