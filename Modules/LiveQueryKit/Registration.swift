import DeliveryKit
import DocumentStoreKit
import OwnershipKit
import Synchronization
import TetherConcurrency

/// One observer of one query, as the engine's ``ObserverTable`` holds it: its query, its lane, and its place in the
/// table (``binding``), which every delivery asks, at the moment of the call, whether the observer's owner lives.
///
/// Ownership is OwnershipKit's: an owner-tied observer is owned by its owner, any other by its ``LiveQuery`` handle.
/// When the table ends the entry — stopped, owner deallocated, handle deinitialized — it sends the stopped notice,
/// and the engine unregisters the observer (its lane cancelled, its payloads released).
final class Registration: Sendable {
    /// How the observer takes its results, for an inspector.
    enum Kind: String, Sendable {
        /// A handler on a queue or executor, under next-signal (`observeLocal` signals when the handler returns).
        case handler
        /// An `async` handler on its own isolation (`observeLocalAsync`).
        case async
        /// An `AsyncSequence` (`snapshots()`).
        case snapshots
    }

    let query: DocumentQuery
    let lane: DeliveryLane<Snapshot>
    let binding: ObserverBinding
    weak let engine: LiveQueryEngine?
    /// Whether the engine unregistered the observer: an atomic in the object, not a lock box of its own (an observer
    /// is made per row of a screen, and each box is an allocation).
    private let stopped = Atomic<Bool>(false)
    /// The result the observer last received (shared with its handle), and the query's text: for an inspector.
    let delivered: DeliveredResult
    let text: String
    let kind: Kind

    init(
        query: DocumentQuery, text: String, kind: Kind, lane: DeliveryLane<Snapshot>, binding: ObserverBinding,
        delivered: DeliveredResult, engine: LiveQueryEngine
    ) {
        self.query = query
        self.text = text
        self.kind = kind
        self.lane = lane
        self.binding = binding
        self.delivered = delivered
        self.engine = engine
        // The observer is ready and nothing waits for it: it takes the query's latest result, if newer, or the
        // engine brings the query up to date if changes wait for it.
        lane.onIdle { [weak self] in
            guard let self else { return }
            self.engine?.observerIdle(self)
        }
        LiveQueryEngine.checkStagedResults(of: self)
    }

    /// Whether the engine has unregistered the observer (or its lane was cancelled).
    var isGone: Bool {
        isStopped || lane.isCancelled
    }

    /// Whether the engine has unregistered the observer.
    var isStopped: Bool {
        stopped.load(ordering: .acquiring)
    }

    /// Marks the observer unregistered.
    func stop() {
        stopped.store(true, ordering: .releasing)
    }

    /// What the engine's observer table does with its notices: the stopped notice unregisters the observer.
    static func deliver(_ registration: Registration, _ notice: ObserverNotice<Never>) {
        if case .stopped = notice { registration.engine?.unregister(registration) }
    }
}
