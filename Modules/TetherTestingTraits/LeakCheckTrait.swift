public import Testing
public import TetherTesting

/// A Swift Testing trait that fails a test when a Tether object it made outlives it.
///
/// Every service, resource, store, live query, document store and entity cache made while the test runs — in its
/// task or in a task that inherits its task-local values — is tracked weakly. When the test returns, each must be
/// deallocated within ``waitLimit``; the ones that are not are recorded as one issue at the test, by label
/// (`resource https://api.example.com/items`, `live query "a == 1"`, `store`). A retain cycle, an observer that was
/// never removed and a live query nobody stopped all show up this way.
///
/// Put it on a suite to check each of its tests (and each case of a parameterized test), or on one test:
///
/// ```swift
/// @Suite("Items screen", .leakChecked)
/// struct ItemsScreenTests {
///     @Test func showsTheList() async throws { … }
/// }
/// ```
///
/// Objects of your own can be tracked too, with ``current``: `LeakCheckTrait.current?.track(screen, "screen")`.
/// A test that throws is not checked: its error is the failure that matters.
public struct LeakCheckTrait: TestTrait, SuiteTrait, TestScoping {
    /// How long, after the test returns, objects may take to go: observers that deliver on queues of their own
    /// drop their last references when their queue runs its last job.
    public var waitLimit: Duration

    /// Applies to every test in a suite, one scope per test case.
    public var isRecursive: Bool { true }

    /// The tracker of the leak-checked test running in this task, if there is one.
    @TaskLocal public static var current: LeakTracker?

    /// Makes the trait; see ``Testing/Trait/leakChecked``.
    public init(waitLimit: Duration) {
        self.waitLimit = waitLimit
    }

    /// Runs the test with a fresh tracker, then records an issue naming what is still alive after ``waitLimit``.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let tracker = LeakTracker()
        try await LeakCheckTrait.$current.withValue(tracker) {
            try await tracker.trackingCreations(function)
        }
        let survivors = await tracker.survivors(waitingUpTo: waitLimit)
        guard !survivors.isEmpty else { return }
        let list = survivors.joined(separator: ", ")
        Issue.record(
            "\(survivors.count) of \(tracker.trackedCount) tracked objects outlived the test by \(waitLimit): \(list)",
            sourceLocation: test.sourceLocation)
    }
}

extension Trait where Self == LeakCheckTrait {
    /// Fails a test when a service, resource, store, live query, document store or cache it made is still alive
    /// 10 seconds after it returns: a deadline for correctness, never reached when nothing leaks, and generous
    /// enough for a loaded machine or a sanitizer.
    public static var leakChecked: Self { LeakCheckTrait(waitLimit: .seconds(10)) }

    /// Fails a test when a Tether object it made is still alive `limit` after it returns.
    public static func leakChecked(waitingUpTo limit: Duration) -> Self { LeakCheckTrait(waitLimit: limit) }
}
