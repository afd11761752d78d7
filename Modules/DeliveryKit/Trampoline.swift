#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A per-thread queue of inline work: the first `run` on a thread runs its work and then everything queued by
/// nested `run`s, in order; nested `run`s only queue. The stack never grows with the amount of work.
@usableFromInline
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

    /// Marks a thread that runs inline work but has queued nothing yet (the queue is made only when needed).
    private static var running: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }

    @usableFromInline
    static func run(_ work: @escaping @Sendable () -> Void) {
        if let current = pthread_getspecific(key) {
            let pending: Pending
            if current == running {
                pending = Pending()
                pthread_setspecific(key, Unmanaged.passRetained(pending).toOpaque())
            } else {
                pending = Unmanaged<Pending>.fromOpaque(current).takeUnretainedValue()
            }
            pending.work.append(work)
            return
        }
        pthread_setspecific(key, running)
        work()
        var index = 0
        while let current = pthread_getspecific(key), current != running {
            let pending = Unmanaged<Pending>.fromOpaque(current).takeUnretainedValue()
            guard index < pending.work.count else {
                Unmanaged<Pending>.fromOpaque(current).release()
                break
            }
            let next = pending.work[index]
            pending.work[index] = {}
            index += 1
            next()
        }
        pthread_setspecific(key, nil)
    }
}
