import TetherConcurrency

/// A gate a test holds an asynchronous call at: the call ``pass()``es (and is held), the test waits until it
/// ``isReached``, does what must happen while the call is held, then ``open()``s. Once open, later passes go
/// straight through.
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

    /// Makes a closed gate.
    public init() {}

    /// Marks the gate reached, then suspends until it is open (at once, if it is).
    public func pass() async {
        reached.fire()
        await opened.wait()
    }

    /// Whether a call has reached the gate.
    public var isReached: Bool { reached.hasFired }

    /// Opens the gate: the held call, and every later one, goes on.
    public func open() { opened.fire() }
}
