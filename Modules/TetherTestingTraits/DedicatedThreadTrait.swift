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
/// locals and issue reporting intact, on a task executor backed by a concurrent dispatch queue of its own, whose
/// threads are not the cooperative pool's. Tasks the test starts with `Task {}` inherit that executor, so nothing
/// the test waits for can queue up behind it.
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
        DispatchQueue.getSpecific(key: DispatchQueueTaskExecutor.marker) != nil
    }

    /// Runs the test with a preference for an executor on a dispatch queue of its own, once one of the slots is free.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await Self.slots.acquire()
        defer { Self.slots.release() }
        let executor = DispatchQueueTaskExecutor(label: "tether.test.\(test.name)")
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

/// A task executor on a concurrent dispatch queue, whose threads are not the cooperative pool's. (A task's jobs never
/// run at once: a task has at most one job enqueued at a time.)
final class DispatchQueueTaskExecutor: TaskExecutor {
    /// Set on every such queue.
    static let marker = DispatchSpecificKey<Bool>()
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, attributes: .concurrent)
        queue.setSpecific(key: Self.marker, value: true)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A counting semaphore whose waiters are suspended, never blocking a thread; served in order.
final class AsyncSlots: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: LockedValue<State>

    init(count: Int) {
        state = LockedValue(State(free: count))
    }

    /// Takes a slot, waiting for one if none is free.
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if now { continuation.resume() }
        }
    }

    /// Gives a slot back, to the longest waiter if there is one.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
