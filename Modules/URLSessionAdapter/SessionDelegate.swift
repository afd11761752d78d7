import Foundation
import TetherConcurrency
import TransportKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session's delegate: routes each task's callbacks to its ``URLSessionExchange``, applies the redirect policy
/// and the size limit.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = LockedValue<[Int: URLSessionExchange]>([:])
    private let redirects: RedirectPolicy
    private let maxResponseSize: Int

    init(redirects: RedirectPolicy, maxResponseSize: Int) {
        self.redirects = redirects
        self.maxResponseSize = maxResponseSize
    }

    /// Runs `task` for `exchange`, and routes the task's callbacks to it until it completes. Call it on the
    /// transport's queue for calls into the session: resuming or cancelling a task waits for the session's work queue.
    func start(_ exchange: URLSessionExchange, on task: URLSessionDataTask) {
        let identifier = task.taskIdentifier
        exchanges.withLock { $0[identifier] = exchange }
        if !exchange.start(task) {
            _ = exchanges.withLock { $0.removeValue(forKey: identifier) }
        }
    }

    private func exchange(for task: URLSessionTask) -> URLSessionExchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let exchange = exchange(for: task), case .follow(let limit) = redirects else {
            completionHandler(nil)  // .never: the 3xx comes back as the response
            return
        }
        guard exchange.countRedirect() <= limit else {
            // Not cancelled: FoundationNetworking traps if a task is cancelled while it waits for this decision.
            // Declining the redirect completes the task with the 3xx, which the exchange turns into the error.
            exchange.end(.tooManyRedirects(limit), cancellingTask: false)
            completionHandler(nil)
            return
        }
        var next = request
        // Credentials are for the origin they were given to (the same rule as ``RedirectPolicy``): any hop that
        // leaves the origin of the hop before it drops the request's sensitive fields.
        if let from = response.url, let to = request.url, !from.isSameOrigin(as: to) {
            let sensitive = exchange.request.sensitiveHeaders
            for name in (next.allHTTPHeaderFields ?? [:]).keys where sensitive.contains(name.lowercased()) {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        completionHandler(next)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if response.expectedContentLength > Int64(maxResponseSize) {
            exchange(for: dataTask)?.end(.tooLarge(maxResponseSize))
            completionHandler(.cancel)
            return
        }
        guard let exchange = exchange(for: dataTask) else { return completionHandler(.cancel) }
        // FoundationNetworking ignores the disposition and reads on; ending the exchange cancels the task.
        if let refusal = exchange.refusal(of: response) {
            exchange.end(.refused(refusal))
            completionHandler(.cancel)
            return
        }
        exchange.received(response)
        completionHandler(.allow)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        exchange(for: task)?.sent(totalBytesSent)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(for: dataTask) else { return }
        if !exchange.append(data, limit: maxResponseSize) {
            exchange.end(.tooLarge(maxResponseSize))
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }?.complete(error)
    }
}
