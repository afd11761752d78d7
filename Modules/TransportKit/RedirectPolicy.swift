#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whether a transport follows HTTP redirects (301, 302, 303, 307, 308 with a `Location`), and how many.
///
/// Every adapter takes one in its configuration and applies the same rules: 303 — and 301 or 302 after a `POST` —
/// becomes a `GET` without a body; 307 and 308 keep the method and body.
public enum RedirectPolicy: Sendable, Hashable {
    /// Follows up to `max` redirects per request; one more fails with
    /// ``TransportError/Kind-swift.struct/tooManyRedirects``.
    case follow(max: Int)
    /// Never follows: the 3xx response is returned as it is.
    case never

    /// Follows up to 5 redirects.
    public static let `default` = RedirectPolicy.follow(max: 5)

    /// The redirect statuses.
    public static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The request that follows `response` to `request`, or nil when `response` is not a redirect that can be
    /// followed (not a redirect status, or no readable `Location`). Does not check the limit.
    public static func followUp(to request: TransportRequest, after response: TransportResponse) -> TransportRequest? {
        guard redirectStatuses.contains(response.status), let location = response.headers["Location"],
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL
        else { return nil }
        var next = request
        next.url = target
        let becomesGET =
            response.status == 303 || ((response.status == 301 || response.status == 302) && request.method == .post)
        if becomesGET && request.method != .head {
            next.method = .get
            next.body = nil
            next.headers["Content-Type"] = nil
            next.headers["Content-Length"] = nil
        }
        if !request.url.isSameOrigin(as: target) {
            // Credentials are for the origin they were given to — which also keeps them off an https → http hop.
            next.headers = next.headers.removingFields(named: request.sensitiveHeaders)
        }
        return next
    }
}

extension RedirectPolicy {
    /// Sends `request` with `exchange` and follows the redirects this policy allows, each hop a fresh exchange —
    /// for transports whose library does not follow redirects itself (or is told not to).
    public func send(
        _ request: TransportRequest, with exchange: (TransportRequest) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        var current = request
        var hops = 0
        while true {
            let response = try await exchange(current)
            guard case .follow(let limit) = self, let next = Self.followUp(to: current, after: response) else {
                return response
            }
            hops += 1
            guard hops <= limit else {
                throw TransportError(
                    .tooManyRedirects, request: request,
                    message: "more than \(limit) redirects (the last to \(next.url.redactedForLogging))")
            }
            current = next
        }
    }
}
