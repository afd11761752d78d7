public import DeliveryKit
public import LiveQueryKit
public import Observation
import TetherConcurrency

/// A live query's result as observable properties, with next-signal back pressure built in: the model takes a new
/// result only once the last one has been read, so a slow view never piles results up — the store goes on
/// committing, and the next result the model takes is the latest, only if it changed.
///
/// ```swift
/// let model = try LiveQueryModel(store.collection("items").find("store_id == 'abc123'").sort("name"))
/// withObservationTracking {
///     render(model.documents)
/// } onChange: {
///     scheduleRender()
/// }
/// ```
///
/// The model owns its observation: it ends when the model is released — a result waiting for it then is dropped,
/// and no handler runs after — or on ``stop()``.
///
/// Read the model where it takes results — on its executor, or on the main actor when that executor is the main
/// queue — so that a reader registered for changes never misses one (see `signalLater`).
///
/// The four ways to observe a query map onto the model's two choices: where results are taken (`deliverOn:`, the
/// main queue by default where SwiftUI exists, a serial queue of the model's own elsewhere), and ``Pacing``: take
/// the next result once this one has been read (next-signal, the default), or as soon as it exists (`observeLocal`).
public final class LiveQueryModel: Observable, Sendable {
    /// When the model takes the next result.
    public enum Pacing: Sendable, Hashable {
        /// Once ``LiveQueryModel/documents`` or ``LiveQueryModel/event`` has been read after the last result came:
        /// `observeLocalWithNextSignal`, with the read as the signal.
        case whenRead
        /// As soon as it exists: `observeLocal`. Each result still replaces the last; nothing queues up.
        case immediately
    }

    private struct State: Sendable {
        var documents: [Document] = []
        var event: LiveQueryEvent?
        var error: (any Error)?
        var signalNext: SignalNext?
        var liveQuery: LiveQuery?
        var results = 0
    }

    private let state = LockedValue(State())
    private let registrar = ObservationRegistrar()
    /// Where results are taken; a read's signal for the next one is sent through it too.
    private let executor: any DeliveryExecutor
    /// The pacing the model was made with.
    public let pacing: Pacing

    /// Observes `query` for as long as the model lives.
    ///
    /// - Parameters:
    ///   - query: The query, as `collection.find(…)` returns it (sorted, limited as you like).
    ///   - executor: Where the model takes results, and so where its properties change.
    ///   - pacing: When the model takes the next result.
    /// - Throws: `QueryError` or `PersistenceError` for an invalid query, before anything is observed.
    public init(
        _ query: PendingQuery, deliverOn executor: some DeliveryExecutor = LiveQueryModel.defaultExecutor,
        pacing: Pacing = .whenRead
    ) throws {
        self.pacing = pacing
        self.executor = executor
        let liveQuery = try query.observeLocalWithNextSignal(
            owner: self, deliverOn: executor,
            onError: { [weak self] error in self?.fail(error) },
            handler: { [weak self] documents, event, signalNext in
                self?.take(documents, event, signalNext)
            })
        state.withLock { $0.liveQuery = liveQuery }
    }

    /// The main queue where SwiftUI exists (its views read models there); elsewhere a serial queue of the model's
    /// own, since a Linux process need not drain the main queue.
    public static var defaultExecutor: DispatchQueueDeliveryExecutor {
        #if canImport(SwiftUI)
        .queue(.main)
        #else
        .serialQueue(label: "tether.livequerymodel")
        #endif
    }

    // MARK: Observable properties

    /// The query's latest result taken: empty before the first. Reading it lets the model take the next result.
    public var documents: [Document] {
        registrar.access(self, keyPath: \.documents)
        let (documents, signal) = state.withLock { state in (state.documents, state.signalNext.take()) }
        signalLater(signal)
        return documents
    }

    /// How the latest result differs from the one before (`LiveQueryEvent.initial` for the first); nil before the
    /// first. Reading it lets the model take the next result.
    public var event: LiveQueryEvent? {
        registrar.access(self, keyPath: \.event)
        let (event, signal) = state.withLock { state in (state.event, state.signalNext.take()) }
        signalLater(signal)
        return event
    }

    /// Why the query could not be evaluated, until a result comes again; the documents stay the last good ones.
    public var error: (any Error)? {
        registrar.access(self, keyPath: \.error)
        return state.withLock { $0.error }
    }

    /// How many results the model has taken.
    public var resultCount: Int {
        registrar.access(self, keyPath: \.resultCount)
        return state.withLock { $0.results }
    }

    /// Ends the observation: no result is taken after this returns. The properties keep the last result.
    public func stop() async {
        let liveQuery = state.withLock { state in
            state.signalNext = nil
            return state.liveQuery.take()
        }
        await liveQuery?.stop()
    }

    // MARK: Taking results

    private func take(_ documents: [Document], _ event: LiveQueryEvent, _ signalNext: SignalNext) {
        let hadError = state.withLock { $0.error != nil }
        registrar.willSet(self, keyPath: \.documents)
        registrar.willSet(self, keyPath: \.event)
        registrar.willSet(self, keyPath: \.resultCount)
        if hadError { registrar.willSet(self, keyPath: \.error) }
        state.withLock { state in
            state.documents = documents
            state.event = event
            state.error = nil
            state.results += 1
            if pacing == .whenRead { state.signalNext = signalNext }
        }
        if hadError { registrar.didSet(self, keyPath: \.error) }
        registrar.didSet(self, keyPath: \.resultCount)
        registrar.didSet(self, keyPath: \.event)
        registrar.didSet(self, keyPath: \.documents)
        if pacing == .immediately { signalNext() }
    }

    /// Sends a read's signal through the executor, not from inside the read: a reader that tracks the model
    /// (`withObservationTracking`, `Observations`, a SwiftUI view) registers for changes only after its read returns,
    /// and a result taken before that would be missed by it, and then, unread, would hold back every later one. Read
    /// on the model's executor (the main queue where SwiftUI exists), the signal runs after the reading job, once
    /// the reader is registered.
    private func signalLater(_ signal: SignalNext?) {
        guard let signal else { return }
        executor.execute { signal() }
    }

    private func fail(_ error: any Error) {
        registrar.withMutation(of: self, keyPath: \.error) {
            state.withLock { $0.error = error }
        }
    }
}
