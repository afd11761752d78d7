import TetherConcurrency

/// What a chain does once the request it waits on has completed (see ``Request/chained(whenCompleted:)``).
public enum RequestChainAction: Sendable {
    /// Follow `request` (starting it if needed): its outcome becomes the chain's.
    case passTo(Request)
    /// End the chain with `outcome`.
    case useResponse(RequestOutcome)
    /// End the chain with the outcome of the request it waited on.
    case useThisResponse
}

extension Request {
    /// A request that waits for this one, then does what `whenCompleted` says with its outcome: end with it, end
    /// with another outcome, or pass to another request (a token refresh, then this request ``repeated()``).
    ///
    /// ```swift
    /// let withFallback = resource.request(.get).chained { outcome in
    ///     outcome.error?.httpStatusCode == 404 ? .useResponse(.newData(placeholder)) : .useThisResponse
    /// }
    /// ```
    ///
    /// (The ResourceKit guide's "Chaining and decorating requests" has a token refresh shared by every request.)
    ///
    /// A chain on a started request starts at once; on one not started yet (from ``repeated()``), starting the
    /// chain starts both. `whenCompleted` runs once, on the chain's task. Cancelling the chain cancels the request it waits
    /// on — unless other chains or loads still follow that one (a refresh shared by several) — and stops it:
    /// `whenCompleted` is not called afterwards. ``repeated()`` on a chain repeats this request and chains it
    /// again with the same `whenCompleted`.
    public func chained(whenCompleted: @escaping @Sendable (RequestOutcome) -> RequestChainAction) -> Request {
        let chain = Request(
            method: method, url: url, timeSource: timeSource, resolve: nil,
            replay: { [self] in repeated().chained(whenCompleted: whenCompleted) }, progressInterval: progressInterval)
        chain.prepare { [self] chain in
            let outcome = await Request.follow(self, for: chain)
            guard !Task.isCancelled else { return outcome }
            switch whenCompleted(outcome) {
            case .useThisResponse: return outcome
            case .useResponse(let other): return other
            case .passTo(let next): return await Request.follow(next, for: chain)
            }
        }
        if isStarted { chain.start() }
        return chain
    }

    /// A new request that sends the same thing again — method, URL and body — with the headers and request
    /// mutations its resource's configuration gives now (so a refreshed token is used). It is not started: pass it
    /// to a chain, to ``Resource/load(using:)``, or call ``start()``. Request decorators are not applied again.
    /// A request made from something that never sent (an invalid URL, a body that did not encode) repeats that
    /// failure.
    public func repeated() -> Request {
        if let replay { return replay() }
        let copy = Request(
            method: method, url: url, timeSource: timeSource, resolve: nil, progressInterval: progressInterval)
        let outcome = completedOutcome
        copy.prepare { [self] _ in
            if let outcome { return outcome }
            return await self.outcome
        }
        return copy
    }

    /// Starts `request` if needed and waits for its outcome, as one of `follower`'s steps: its progress becomes
    /// the follower's (while it grows), and when the waiting task is cancelled, the request is cancelled too if no
    /// other follower remains.
    static func follow(_ request: Request, for follower: Request) async -> RequestOutcome {
        request.state.withLock { $0.followers += 1 }
        request.onProgress { follower.report($0) }
        let following = LockedValue(true)
        // Leaves once, by whichever comes first: the outcome, or cancellation.
        let leave: @Sendable (_ cancelIfLast: Bool) -> Void = { cancelIfLast in
            guard following.withLock({ $0.take() }) else { return }
            let isLast = request.state.withLock { state in
                state.followers -= 1
                return state.followers == 0
            }
            if cancelIfLast, isLast { request.cancel() }
        }
        request.start()
        return await withTaskCancellationHandler {
            let outcome = await request.outcome
            leave(false)
            return outcome
        } onCancel: {
            leave(true)
        }
    }
}

extension Bool {
    /// Returns the value and leaves false (a flag taken once).
    fileprivate mutating func take() -> Bool {
        defer { self = false }
        return self
    }
}
