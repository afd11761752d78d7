import Dispatch
import TetherConcurrency

/// A gate a test holds an asynchronous call at: the call ``pass()``es (and is held), the test waits until it
/// ``isReached``, does what must happen while the call is held, then ``open()``s. Once open, later passes go
/// straight through. A synchronous call, on a thread of its own (a dispatch queue, never Swift concurrency's),
/// passes with ``passBlocking()``.
///
/// ```swift
/// let gate = AsyncGate()
/// let liveQuery = try items.findAll().observeLocalAsync { _, _ in await gate.pass() }
/// try await eventually { gate.isReached }
/// // …the call is held here…
/// gate.open()
/// ```
public final class AsyncGate: Sendable {
    private let reached = OneShot<Void>()
    private let opened = OneShot<Void>()
    /// Wakes the threads blocked in ``passBlocking()``, one after the other.
    private let released = DispatchSemaphore(value: 0)

    /// Makes a closed gate.
    public init() {}

    /// Marks the gate reached, then suspends until it is open (at once, if it is).
    public func pass() async {
        reached.fire()
        await opened.wait()
    }

    /// ``pass()`` for a synchronous call: blocks its thread until the gate is open (returns at once, if it is).
    public func passBlocking() {
        guard !opened.hasFired else { return }
        reached.fire()
        released.wait()
        released.signal()  // the next blocked thread, if any
    }

    /// Whether a call has reached the gate.
    public var isReached: Bool { reached.hasFired }

    /// Opens the gate: the held call, and every later one, goes on.
    public func open() {
        opened.fire()
        released.signal()
    }
}
