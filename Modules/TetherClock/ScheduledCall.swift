/// A call scheduled with ``TimeSource/schedule(after:_:)``: ``cancel()`` keeps it from running, if it has not started.
///
/// Cancelling costs the caller a lock and, on the system clock's timer thread, re-arming the timer for the next call
/// (one system call, no wake-up): a call that is no longer wanted then wakes no thread at all, where one left to run
/// would wake the timer thread to find nothing to do.
public struct ScheduledCall: Sendable {
    private let cancelling: @Sendable () -> Void

    /// A call that `cancel` keeps from running; `cancel` may be called any number of times, from any thread, also
    /// after the call has run.
    public init(cancel: @escaping @Sendable () -> Void) {
        cancelling = cancel
    }

    /// Keeps the call from running, if it has not started; does nothing once it has.
    public func cancel() {
        cancelling()
    }
}
