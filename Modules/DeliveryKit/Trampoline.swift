#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A per-thread queue of inline work: the first `run` on a thread runs its work and then everything queued by
/// nested `run`s, in order; nested `run`s only queue. The stack never grows with the amount of work.
enum Trampoline {
    /// The queue of a thread that is running inline work; thread-confined, so it needs no lock.
    final class Pending {
        var work: [@Sendable () -> Void] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed with \(status): the process is out of thread-local keys")
        return key
    }()

    static func run(_ work: @escaping @Sendable () -> Void) {
        if let current = pthread_getspecific(key) {
            Unmanaged<Pending>.fromOpaque(current).takeUnretainedValue().work.append(work)
            return
        }
        let pending = Pending()
        pthread_setspecific(key, Unmanaged.passUnretained(pending).toOpaque())
        defer { pthread_setspecific(key, nil) }
        work()
        var index = 0
        while index < pending.work.count {
            let next = pending.work[index]
            pending.work[index] = {}
            index += 1
            next()
        }
    }
}
