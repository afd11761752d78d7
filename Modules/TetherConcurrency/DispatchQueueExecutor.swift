import Dispatch

/// A task executor on a dispatch queue of its own, whose threads are not Swift concurrency's cooperative pool: a task
/// that prefers it (`Task(executorPreference:)`) runs its jobs there, including every resumption after an `await`.
///
/// The cooperative pool has one thread per core. Work that must keep its pace whatever else the process does — a
/// store's live-query engine — runs here instead, the way GRDB runs its observations on its own serial queues: a job
/// waits for its queue, never behind every other task in the process. A serial queue costs at most one thread, and
/// only while it has work.
package final class DispatchQueueExecutor: TaskExecutor {
    /// The queue the jobs run on.
    let queue: DispatchQueue

    /// Makes an executor on a new serial queue named `label`. (A serial queue, not a concurrent one: libdispatch
    /// serves a concurrent queue from the same pool as Swift concurrency, one thread per core.)
    package init(label: String) {
        queue = DispatchQueue(label: label)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
