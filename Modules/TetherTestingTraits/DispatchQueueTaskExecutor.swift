import Dispatch

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
