import Foundation
import TetherConcurrency
import TransportKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request's life in the session: the continuation to resume exactly once, the task once it is made, the body
/// received so far, the deadline timer, and why it ended early (cancelled, timed out, too large, too many redirects).
///
/// An early end resumes the caller at once, whatever FoundationNetworking is doing: cancelling the task waits for the
/// session's work queue, so it is handed to the transport's queue for calls into the session (`sessionCalls`), and
/// what the task reports after that is dropped.
final class URLSessionExchange: Sendable {
    enum EarlyEnd: Sendable {
        case cancelled
        case timedOut
        case tooLarge(Int)
        case tooManyRedirects(Int)
        case refused(TransportError)
    }

    private struct State {
        var continuation: CheckedContinuation<TransportResponse, any Error>?
        var task: URLSessionDataTask?
        var head: (status: Int, headers: HTTPHeaders)?
        var body = Data()
        var redirects = 0
        var earlyEnd: EarlyEnd?
        var finished = false
        var timer: Task<Void, Never>?
        var progress: TransportProgress
    }

    let request: TransportRequest
    private let state: LockedValue<State>
    private let progress: TransportProgressHandler?
    private let sessionCalls: DispatchQueue

    init(request: TransportRequest, progress: TransportProgressHandler?, sessionCalls: DispatchQueue) {
        self.request = request
        self.progress = progress
        self.sessionCalls = sessionCalls
        state = LockedValue(State(progress: TransportProgress(bytesToSend: Int64(request.body?.count ?? 0))))
    }

    /// Changes the progress counts and reports them, unless the exchange has ended.
    private func report(_ change: (inout TransportProgress) -> Void) {
        guard let progress else { return }
        let counts = state.withLock { state -> TransportProgress? in
            guard state.earlyEnd == nil, !state.finished else { return nil }
            change(&state.progress)
            return state.progress
        }
        if let counts { progress(counts) }
    }

    /// The session has sent `total` body bytes.
    func sent(_ total: Int64) {
        report { $0.bytesSent = max($0.bytesSent, total) }
    }

    /// Takes the caller's continuation and starts the deadline. False when the exchange has ended already (the
    /// caller was cancelled before it got here): the continuation is resumed with that, and no task is to be made.
    func begin(_ continuation: CheckedContinuation<TransportResponse, any Error>, timeout: Duration) -> Bool {
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self?.end(.timedOut)
        }
        let ended = state.withLock { state -> EarlyEnd? in
            if let early = state.earlyEnd { return early }
            state.continuation = continuation
            state.timer = timer
            return nil
        }
        guard let ended else { return true }
        timer.cancel()
        state.withLock { $0.finished = true }
        continuation.resume(throwing: error(for: ended))
        return false
    }

    /// Whether the exchange has ended early: then no task is to be made for it.
    var hasEnded: Bool {
        state.withLock { $0.earlyEnd != nil }
    }

    /// Runs `task`, made for this exchange on the transport's queue for calls into the session (where this runs too),
    /// unless the exchange ended while it was being made: then cancels it and returns false.
    func start(_ task: URLSessionDataTask) -> Bool {
        let ended = state.withLock { state -> Bool in
            state.task = task
            return state.earlyEnd != nil
        }
        if ended {
            task.cancel()
            return false
        }
        task.resume()
        return true
    }

    /// Ends the exchange early: resumes the caller with `reason` at once, and cancels the task (unless told not to)
    /// on the queue for calls into the session.
    func end(_ reason: EarlyEnd, cancellingTask: Bool = true) {
        let ended = state.withLock {
            state -> (CheckedContinuation<TransportResponse, any Error>?, URLSessionDataTask?, Task<Void, Never>?)? in
            guard state.earlyEnd == nil, !state.finished else { return nil }
            state.earlyEnd = reason
            defer {
                state.continuation = nil
                state.body = Data()
            }
            return (state.continuation, state.task, state.timer)
        }
        guard let (continuation, task, timer) = ended else { return }
        timer?.cancel()
        continuation?.resume(throwing: error(for: reason))
        if cancellingTask, let task { sessionCalls.async { task.cancel() } }
    }

    func countRedirect() -> Int {
        state.withLock { state in
            state.redirects += 1
            return state.redirects
        }
    }

    func received(_ response: URLResponse) {
        state.withLock { state in
            state.head = (response as? HTTPURLResponse).map { ($0.statusCode, Self.headers(of: $0)) }
            state.body.removeAll(keepingCapacity: true)
        }
        report { counts in
            counts.bytesSent = counts.bytesToSend  // the whole request is out once the response begins
            counts.hasResponse = true
            counts.bytesReceived = 0
            counts.bytesToReceive = response.expectedContentLength >= 0 ? response.expectedContentLength : nil
        }
    }

    /// Why `response` must not be read (a content coding the request did not accept), if it must not.
    func refusal(of response: URLResponse) -> TransportError? {
        guard let response = response as? HTTPURLResponse else { return nil }
        return ContentCoding.refusal(of: Self.headers(of: response), to: request)
    }

    /// Appends `data`; false when the body would exceed `limit`. Once the exchange has ended early, what
    /// FoundationNetworking still delivers (it reads on until the cancellation reaches libcurl) is dropped unread.
    func append(_ data: Data, limit: Int) -> Bool {
        let appended = state.withLock { state -> Bool? in
            guard state.earlyEnd == nil else { return nil }
            guard state.body.count + data.count <= limit else { return false }
            state.body.append(data)
            return true
        }
        if appended == true { report { $0.bytesReceived += Int64(data.count) } }
        return appended ?? true
    }

    /// The task completed (`error` nil on success): resumes the caller with the response or the mapped error, unless
    /// the exchange ended early and did so already.
    func complete(_ taskError: (any Error)?) {
        let (continuation, head, body, timer) = state.withLock { state in
            state.finished = true
            defer {
                state.continuation = nil
                state.body = Data()
            }
            return (state.continuation, state.head, state.body, state.timer)
        }
        timer?.cancel()
        guard let continuation else { return }
        if let taskError {
            continuation.resume(
                throwing: URLErrorMapping.transportError(taskError, request: request, afterHead: head != nil))
        } else if let head {
            continuation.resume(returning: TransportResponse(status: head.status, headers: head.headers, body: body))
        } else {
            continuation.resume(
                throwing: TransportError(
                    .malformedResponse, request: request, message: "the session completed without an HTTP response"))
        }
    }

    private func error(for reason: EarlyEnd) -> TransportError {
        switch reason {
        case .cancelled:
            return TransportError(.cancelled, request: request, message: "the calling task was cancelled")
        case .timedOut:
            return TransportError(
                .timedOut, request: request, message: "no complete response within \(request.timeout)")
        case .tooLarge(let limit):
            return TransportError(
                .responseTooLarge, request: request, message: "the response body is larger than \(limit) bytes")
        case .tooManyRedirects(let limit):
            return TransportError(
                .tooManyRedirects, request: request, message: "more than \(limit) redirects")
        case .refused(let error):
            return error
        }
    }

    private static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for (name, value) in response.allHeaderFields {
            headers.add(name: "\(name)", value: "\(value)")
        }
        return headers
    }
}
