import TetherConcurrency

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

    /// The survivors once they are all gone or `limit` has passed, whichever comes first (checked every 5 ms).
    ///
    /// Deallocation is synchronous, but the last reference to an object is not always dropped on the test's
    /// thread: an observer delivering on a queue of its own lets go when that queue runs its last job, and a load's
    /// task may still be returning. Waiting a bounded time for those makes a leak check independent of scheduling.
    public func survivors(waitingUpTo limit: Duration) async -> [String] {
        let deadline = ContinuousClock.now + limit
        var alive = survivors
        while !alive.isEmpty, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
            alive = survivors
        }
        return alive
    }

    /// Runs `body`, tracking every Tether object it makes: services, resources, stores, live queries, document
    /// stores and entity caches, each labelled with what it is (`resource https://…/items`, `live query "a == 1"`).
    ///
    /// What counts is where the object is made: in `body`'s task or in a task that inherits its task-local values
    /// (child tasks and `Task {}`; not `Task.detached` or dispatch queues).
    ///
    /// ```swift
    /// let tracker = LeakTracker()
    /// try await tracker.trackingCreations {
    ///     let store = Store.inMemory()
    ///     let query = try store.collection("items").findAll().observeLocal { _, _ in }
    ///     query.stop()
    /// }
    /// #expect(await tracker.survivors(waitingUpTo: .seconds(5)).isEmpty)
    /// ```
    public func trackingCreations<T>(_ body: () async throws -> T) async rethrows -> T {
        try await LifetimeTracking.$sink.withValue({ [self] object, label in track(object, label) }) {
            try await body()
        }
    }

    /// Runs `body`, tracking every Tether object it makes on this thread's task (see the `async` form).
    public func trackingCreations<T>(_ body: () throws -> T) rethrows -> T {
        try LifetimeTracking.$sink.withValue({ [self] object, label in track(object, label) }) {
            try body()
        }
    }
}
