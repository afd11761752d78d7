import Dispatch
import Foundation
public import Testing
import TetherConcurrency

/// A Swift Testing trait that runs each test on a thread of its own instead of one of Swift concurrency's
/// cooperative threads, of which there are as many as cores.
///
/// A test that blocks — joining threads, polling with `usleep`, hammering a lock from a synchronous body — holds its
/// thread for as long as it runs. On a cooperative thread that starves every async test beside it: on a 2-core
/// machine, two such tests at once stop all of Swift concurrency, and an async test waiting 10 seconds for a
/// delivery times out through no fault of its own. Under this trait the test runs in the same task, with its task
/// locals and issue reporting intact, on a task executor that runs each job on a serial dispatch queue of its own,
/// which libdispatch serves from its overcommitting threads, not the cooperative pool's: a thread is there even while
/// every other one blocks. Tasks the test starts with `Task {}` inherit that executor, so nothing the test waits for
/// can queue up behind it.
///
/// No more tests under this trait run at once than the machine has cores (the others wait, suspended): as many as
/// the cooperative pool let run before, so that moving them off it does not oversubscribe the processor and slow
/// every other test down. Use it for tests that block, not for async tests that merely wait.
///
/// ```swift
/// @Suite("Stress", .onDedicatedThread)
/// struct StressTests {
///     @Test func eightThreadsAtOnce() { … }        // blocks while its threads run
/// }
/// ```
public struct DedicatedThreadTrait: TestTrait, SuiteTrait, TestScoping {
    /// Applies to every test in a suite, one thread per test case.
    public var isRecursive: Bool { true }

    /// Makes the trait; see ``Testing/Trait/onDedicatedThread``.
    public init() {}

    /// Whether the caller runs on the thread of a test under this trait.
    public static var isCurrent: Bool {
        DispatchQueueExecutor.current == .perJob
    }

    /// Runs the test with a preference for an executor on a dispatch queue of its own, once one of the slots is free.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Already on such a thread (the trait on a suite and on one of its tests): one slot is enough.
        guard !Self.isCurrent else { return try await function() }
        await Self.slots.acquire()
        defer { Self.slots.release() }
        let executor = DispatchQueueExecutor(label: "tether.test.\(test.name)", queues: .perJob)
        try await withTaskExecutorPreference(executor) {
            try await function()
        }
    }

    /// One slot per core, shared by every test under the trait.
    static let slots = AsyncSlots(count: max(1, ProcessInfo.processInfo.activeProcessorCount))
}

extension Trait where Self == DedicatedThreadTrait {
    /// Runs each test on a thread of its own, so that a test that blocks never holds up Swift concurrency.
    public static var onDedicatedThread: Self { DedicatedThreadTrait() }
}
