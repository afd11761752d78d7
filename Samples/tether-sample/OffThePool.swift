import Foundation

/// Runs `work` on a thread of its own and returns what it returns: for synchronous work that may take long — the
/// configuration's load reads a file, perhaps a pipe, and decodes it — which must not hold a thread of Swift
/// concurrency's pool. On one CPU the pool has one thread, and the signal watcher could not run until the work ended.
func offThePool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result(catching: work)) }
    }
}
