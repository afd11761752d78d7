import TetherClock
import TetherConcurrency
public import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a request ended.
public enum RequestOutcome: Sendable {
    /// The server sent data, after the response pipeline.
    case newData(Entity)
    /// The server answered 304 Not Modified. For a load, the resource's data (its timestamp touched).
    case notModified(Entity?)
    /// The request failed or was cancelled.
    case failure(ResourceError)

    /// The entity of a success: new data, or the data a 304 confirmed.
    public var entity: Entity? {
        switch self {
        case .newData(let entity): entity
        case .notModified(let entity): entity
        case .failure: nil
        }
    }

    /// The entity of a success, or the error of a failure. A 304 with no entity (a plain request, not a load)
    /// gives an entity with empty content.
    public func get() throws(ResourceError) -> Entity {
        switch self {
        case .newData(let entity): return entity
        case .notModified(let entity?): return entity
        case .notModified(nil): return Entity(content: Data(), timestamp: Date())
        case .failure(let error): throw error
        }
    }

    /// The error of a failure.
    public var error: ResourceError? {
        if case .failure(let error) = self { error } else { nil }
    }
}

/// A request in flight, or done: cancel it, be told when it ends, or await its outcome.
///
/// ```swift
/// resource.load()
///     .onSuccess { entity in print(entity.content) }
///     .onFailure { error in print(error) }
/// let outcome = await resource.request(.post, json: draft).outcome
/// ```
///
/// Callbacks run once, on the thread that completes the request (at once when added to a completed request).
/// For a load, the resource's state is updated, and its observers told, before the request's callbacks run.
public final class Request: Sendable, Hashable, CustomStringConvertible {
    /// The method.
    public let method: HTTPMethod
    /// The URL, or the text that was not a valid URL.
    public let url: String

    /// The work that produces the outcome, given the request it works for (to report progress to).
    typealias Work = @Sendable (Request) async -> RequestOutcome

    struct State: Sendable {
        /// Set when completion begins: the first outcome wins.
        var isClaimed = false
        /// Set when completion ends (after the resource has resolved it).
        var outcome: RequestOutcome?
        var callbacks: [@Sendable (RequestOutcome) -> Void] = []
        /// The work, until ``start()`` hands it to a task.
        var work: Work?
        var task: Task<Void, Never>?
        var resolve: (@Sendable (Request, RequestOutcome) -> RequestOutcome)?
        /// How many chains and loads follow this request now (see ``follow(_:)``).
        var followers = 0
        var progress = RequestProgressState()
    }

    let state = LockedValue(State())
    /// The outcome, for the tasks awaiting ``outcome``.
    let completion = OneShot<RequestOutcome>()
    /// The service's clock, for the timestamp of a cancellation.
    let timeSource: any TimeSource
    /// Makes a new, unstarted request that sends the same thing again (``repeated()``).
    let replay: (@Sendable () -> Request)?
    /// The least time between two progress reports.
    let progressInterval: Duration

    init(
        method: HTTPMethod, url: String, timeSource: any TimeSource,
        resolve: (@Sendable (Request, RequestOutcome) -> RequestOutcome)?, replay: (@Sendable () -> Request)? = nil,
        progressInterval: Duration = .milliseconds(50)
    ) {
        self.method = method
        self.url = url
        self.timeSource = timeSource
        self.replay = replay
        self.progressInterval = progressInterval
        state.withLock { $0.resolve = resolve }
    }

    /// Gives the request its work, to run at ``start()``.
    func prepare(_ work: @escaping Work) {
        state.withLock { state in
            guard !state.isClaimed, state.task == nil else { return }
            state.work = work
        }
    }

    /// Gives the request its work and starts it at once.
    func start(_ work: @escaping Work) {
        prepare(work)
        start()
    }

    /// Starts the request, if it has not started: its work runs in a task of its own, and the request completes with
    /// what it returns (unless cancelled first). Requests from ``Resource`` start at once; those from
    /// ``repeated()`` and ``chained(whenCompleted:)`` (on a request not yet started) wait for this, or for a chain
    /// or load that follows them. Returns the request.
    @discardableResult
    public func start() -> Request {
        state.withLock { state in
            guard !state.isClaimed, let work = state.work.take() else { return }
            state.task = Task { [self] in
                let outcome = await work(self)
                complete(with: outcome)
            }
        }
        return self
    }

    /// Whether ``start()`` has been called (or the request completed without it).
    public var isStarted: Bool {
        state.withLock { $0.task != nil || $0.isClaimed }
    }

    /// Completes the request, once: the first outcome wins. The resource's `resolve` runs first (and may refine the
    /// outcome), then callbacks and waiters.
    func complete(with outcome: RequestOutcome) {
        let resolve = state.withLock { state -> (@Sendable (Request, RequestOutcome) -> RequestOutcome)?? in
            guard !state.isClaimed else { return nil }
            state.isClaimed = true
            return .some(state.resolve.take())
        }
        guard let resolve else { return }
        finishProgress()
        let final = resolve.map { $0(self, outcome) } ?? outcome
        let callbacks = state.withLock { state in
            state.outcome = final
            state.task = nil
            state.work = nil
            defer { state.callbacks = [] }
            return state.callbacks
        }
        for callback in callbacks { callback(final) }
        completion.fire(final)
    }

    /// Cancels the request: it completes at once with a ``ResourceError/Kind-swift.struct/cancelled`` failure, its
    /// exchange is cancelled, and its response, should one still arrive, is ignored. Does nothing once completed.
    public func cancel() {
        let task = state.withLock { $0.isClaimed ? nil : $0.task }
        complete(with: .failure(cancellationError))
        task?.cancel()
    }

    /// The failure a cancelled request completes with.
    var cancellationError: ResourceError {
        ResourceError(
            .cancelled, message: "the request was cancelled", method: method, url: url, timestamp: timeSource.now)
    }

    /// Whether the request has completed (succeeded, failed or been cancelled).
    public var isCompleted: Bool {
        state.withLock { $0.outcome != nil }
    }

    /// The outcome, once the request has completed.
    public var completedOutcome: RequestOutcome? {
        state.withLock { $0.outcome }
    }

    /// Waits for the request to complete and returns how it ended. Waiting does not cancel anything: to end the
    /// request sooner, call ``cancel()`` (which completes it at once).
    public var outcome: RequestOutcome {
        get async {
            await completion.wait()
        }
    }

    /// Calls `callback` with the outcome when the request completes (at once if it has).
    @discardableResult
    public func onCompletion(_ callback: @escaping @Sendable (RequestOutcome) -> Void) -> Request {
        let done = state.withLock { state -> RequestOutcome? in
            if let outcome = state.outcome { return outcome }
            state.callbacks.append(callback)
            return nil
        }
        if let done { callback(done) }
        return self
    }

    /// Calls `callback` with the entity when the request succeeds (new data, or data a 304 confirmed).
    @discardableResult
    public func onSuccess(_ callback: @escaping @Sendable (Entity) -> Void) -> Request {
        onCompletion { outcome in
            if let entity = outcome.entity { callback(entity) }
        }
    }

    /// Calls `callback` with the entity when the request brings new data (not when a 304 confirms the old).
    @discardableResult
    public func onNewData(_ callback: @escaping @Sendable (Entity) -> Void) -> Request {
        onCompletion { outcome in
            if case .newData(let entity) = outcome { callback(entity) }
        }
    }

    /// Calls `callback` when the server answers 304 Not Modified (for a load, after the resource's data had its
    /// timestamp touched).
    @discardableResult
    public func onNotModified(_ callback: @escaping @Sendable () -> Void) -> Request {
        onCompletion { outcome in
            if case .notModified = outcome { callback() }
        }
    }

    /// Calls `callback` with the error when the request fails (including cancellation).
    @discardableResult
    public func onFailure(_ callback: @escaping @Sendable (ResourceError) -> Void) -> Request {
        onCompletion { outcome in
            if let error = outcome.error { callback(error) }
        }
    }

    /// Identity.
    public static func == (lhs: Request, rhs: Request) -> Bool { lhs === rhs }

    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    /// `METHOD url`.
    public var description: String { "\(method) \(url)" }
}
