import Dispatch
import LiveQueryKit
import TetherConcurrency

/// The mirror scenario's screen: a live query's consumer under next-signal. It renders each result on its own queue
/// and signals when done; while held, a render waits until ``release()``, as a screen busy with a slow layout would.
final class CatalogScreen: Sendable {
    private struct State {
        var rendered = 0
        var documents: [Document] = []
        var busy = false
        var held = false
    }

    private let state = LockedValue(State())
    private let queue = DispatchQueue(label: "tether.sample.catalog-screen")
    private let gate = DispatchSemaphore(value: 0)

    /// How many results the screen has rendered.
    var rendered: Int { state.withLock { $0.rendered } }

    /// What the screen shows.
    var documents: [Document] { state.withLock { $0.documents } }

    /// Whether the screen shows `documents` and has no result in hand: the live query has nothing newer to give it
    /// unless the store changes.
    func shows(_ documents: [Document]) -> Bool {
        state.withLock { !$0.busy && $0.documents == documents }
    }

    /// The live query's handler.
    func handler() -> @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void {
        { documents, _, signalNext in
            self.state.withLock { $0.busy = true }
            self.queue.async {
                // A dispatch queue of the screen's own, not a thread of Swift concurrency, may wait.
                if self.state.withLock({ $0.held }) { self.gate.wait() }
                self.state.withLock {
                    $0.rendered += 1
                    $0.documents = documents
                    $0.busy = false
                }
                signalNext()
            }
        }
    }

    /// From now on a render waits for ``release()``.
    func hold() {
        state.withLock { $0.held = true }
    }

    /// Lets a waiting render finish, and holds no more.
    func release() {
        state.withLock { $0.held = false }
        gate.signal()
    }
}
