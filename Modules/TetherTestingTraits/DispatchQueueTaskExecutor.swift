import Dispatch

/// A task executor whose jobs run on threads that are not Swift concurrency's cooperative pool: each job on a new
/// serial dispatch queue, which libdispatch serves from its overcommitting pool — a thread is there even while every
/// other one blocks. (A concurrent queue would not do: it draws on the same non-overcommitting pool as Swift
/// concurrency, one thread per core, which a test blocking on purpose would take from every other test.) A task has
/// at most one job enqueued at a time, so its jobs never run at once.
final class DispatchQueueTaskExecutor: TaskExecutor {
    /// Set on every queue of such an executor.
    static let marker = DispatchSpecificKey<Bool>()
    private let label: String

    init(label: String) {
        self.label = label
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.marker, value: true)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
