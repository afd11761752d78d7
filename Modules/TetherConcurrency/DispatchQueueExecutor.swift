import Dispatch

/// A task executor on dispatch queues of its own, whose threads are not Swift concurrency's cooperative pool: a task
/// that prefers it (`Task(executorPreference:)`) runs its jobs there, including every resumption after an `await`.
///
/// The cooperative pool has one thread per core. Work that must keep its pace whatever else the process does — a
/// store's live-query engine — runs here instead, the way GRDB runs its observations on its own serial queues: a job
/// waits for its queue, never behind every other task in the process. The queues are serial ones: libdispatch serves
/// a concurrent queue from the same pool as Swift concurrency. A serial queue costs at most one thread, and only while
/// it has work.
package final class DispatchQueueExecutor: TaskExecutor {
    /// How jobs are given queues.
    package enum Queues: Sendable, Equatable {
        /// One serial queue: the jobs run one at a time, in the order they come (an engine's).
        case one
        /// A new serial queue for each job: the jobs of different tasks run at once, and one that blocks holds only
        /// its own thread (a test that blocks on purpose while tasks it started must go on). A task has at most one
        /// job enqueued at a time, so its own jobs never run at once.
        case perJob
    }

    /// Set on every queue of such an executor, to its ``Queues``.
    private static let marker = DispatchSpecificKey<Queues>()

    private let label: String
    private let queues: Queues
    /// The queue, for ``Queues/one``.
    private let queue: DispatchQueue?

    /// Makes an executor whose queues are named `label`.
    package init(label: String, queues: Queues = .one) {
        self.label = label
        self.queues = queues
        queue = queues == .one ? Self.makeQueue(label, .one) : nil
    }

    /// How the queues of the executor running the caller are given, if one of these runs it.
    package static var current: Queues? {
        DispatchQueue.getSpecific(key: marker)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queue = self.queue ?? Self.makeQueue(label, queues)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    private static func makeQueue(_ label: String, _ queues: Queues) -> DispatchQueue {
        let queue = DispatchQueue(label: label)
        queue.setSpecific(key: marker, value: queues)
        return queue
    }
}
