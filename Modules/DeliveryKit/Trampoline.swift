import TetherConcurrency

/// A per-thread queue of inline work: the first `run` on a thread runs its work and then everything queued by
/// nested `run`s, in order; nested `run`s only queue. The stack never grows with the amount of work.
@usableFromInline
enum Trampoline {
    /// The queue of a thread that is running inline work; thread-confined, so it needs no lock.
    final class Pending {
        var work: [@Sendable () -> Void] = []
    }

    private static let slot = ThreadLocalSlot()

    /// Marks a thread that runs inline work but has queued nothing yet (the queue is made only when needed).
    private static var running: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }

    @usableFromInline
    static func run(_ work: @escaping @Sendable () -> Void) {
        if let current = slot.value {
            let pending: Pending
            if current == running {
                pending = Pending()
                slot.value = Unmanaged.passRetained(pending).toOpaque()
            } else {
                pending = Unmanaged<Pending>.fromOpaque(current).takeUnretainedValue()
            }
            pending.work.append(work)
            return
        }
        slot.value = running
        work()
        var index = 0
        while let current = slot.value, current != running {
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
        slot.value = nil
    }
}
