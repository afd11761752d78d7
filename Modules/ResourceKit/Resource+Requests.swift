import EntityCacheKit
import Logging
import TetherClock
import TetherConcurrency
public import TransportKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension Resource {
    /// Sends a request with `method` and `body` to this resource's URL, configured for `method` (headers, request
    /// mutations, decorators, pipeline), without changing the resource's state or notifying its observers.
    ///
    /// ```swift
    /// resource.request(.post, json: newItem).onSuccess { _ in resource.load() }
    /// ```
    ///
    /// ``wipe()`` cancels it; ``allRequests`` lists it until it ends.
    @discardableResult
    public func request(
        _ method: HTTPMethod, body: Data? = nil, contentType: String? = nil, headers: HTTPHeaders = [:]
    ) -> Request {
        let request = decorated(makeRequest(method, body: body, contentType: contentType, headers: headers))
        track(request)
        return request.start()
    }

    /// An unstarted request that sends `method` and `body` with the configuration's headers and mutations as they
    /// are now; its ``Request/repeated()`` makes another the same way.
    func makeRequest(_ method: HTTPMethod, body: Data?, contentType: String?, headers: HTTPHeaders) -> Request {
        let configuration = configuration(for: method)
        let request = Request(
            method: method, url: urlString, timeSource: core.timeSource, resolve: nil,
            replay: { [self] in makeRequest(method, body: body, contentType: contentType, headers: headers) },
            progressInterval: configuration.progressReportingInterval)
        guard
            let work = exchangeWork(
                method, body: body, contentType: contentType, headers: headers, configuration: configuration)
        else {
            request.complete(with: .failure(invalidURLError(method: method)))
            return request
        }
        request.prepare(work)
        return request
    }

    /// The work of a request that sends `method` and `body` under `configuration`: the exchange, through the
    /// configuration's pipeline. Nil when the resource has no valid URL.
    func exchangeWork(
        _ method: HTTPMethod, body: Data?, contentType: String?, headers: HTTPHeaders,
        configuration: ResourceConfiguration, capture: LockedValue<CachedEntity?>? = nil
    ) -> Request.Work? {
        guard
            let transportRequest = transportRequest(
                method, configuration: configuration,
                adjust: { request in
                    request.body = body
                    request.headers.merge(headers)
                    if let contentType { request.headers["Content-Type"] = contentType }
                })
        else { return nil }
        let pipeline = configuration.pipeline
        return { [self] request in
            await exchange(transportRequest, pipeline: pipeline, capture: capture, reportingTo: request)
        }
    }

    /// What goes to the transport for `method` under `configuration`: its headers, timeout and sensitive headers,
    /// then `adjust` (a body, headers of the call's own), then the configuration's request mutations, in order. Nil
    /// when the resource has no valid URL.
    func transportRequest(
        _ method: HTTPMethod, configuration: ResourceConfiguration,
        adjust: (inout TransportRequest) -> Void = { _ in }
    ) -> TransportRequest? {
        guard let url else { return nil }
        var request = TransportRequest(
            method: method, url: url, headers: configuration.headers, timeout: configuration.timeout,
            sensitiveHeaders: configuration.sensitiveHeaders)
        adjust(&request)
        for mutation in configuration.requestMutations { mutation(&request) }
        return request
    }

    /// `request` as the configuration's decorators for its method make it (itself, when there are none).
    func decorated(_ request: Request) -> Request {
        configuration(for: request.method).requestDecorators.reduce(request) { request, decorate in
            decorate(self, request)
        }
    }

    /// Lists `request` in ``allRequests`` until it completes.
    private func track(_ request: Request) {
        state.withLock { $0.requests.append((request, false)) }
        request.onCompletion { [self] _ in state.withLock { $0.removeRequest(request) } }
    }

    /// Sends `text` as a `text/plain; charset=utf-8` body (see ``request(_:body:contentType:headers:)``).
    @discardableResult
    public func request(_ method: HTTPMethod, text: String, headers: HTTPHeaders = [:]) -> Request {
        request(method, body: Data(text.utf8), contentType: "text/plain; charset=utf-8", headers: headers)
    }

    /// Sends `fields` as an `application/x-www-form-urlencoded` body (names sorted; every character but the
    /// unreserved ones percent-encoded), as an OAuth token endpoint wants (see
    /// ``request(_:body:contentType:headers:)``).
    @discardableResult
    public func request(_ method: HTTPMethod, urlEncoded fields: [String: String], headers: HTTPHeaders = [:])
        -> Request
    {
        let body = fields.sorted { $0.key < $1.key }
            .map { Self.encodeQueryComponent($0.key) + "=" + Self.encodeQueryComponent($0.value) }
            .joined(separator: "&")
        return request(
            method, body: Data(body.utf8), contentType: "application/x-www-form-urlencoded", headers: headers)
    }

    /// Sends `json` encoded by `encoder` as an `application/json` body (see
    /// ``request(_:body:contentType:headers:)``). A value that does not encode fails the request without sending.
    @discardableResult
    public func request<Body: Encodable>(
        _ method: HTTPMethod, json: Body, encoder: JSONEncoder = JSONEncoder(), headers: HTTPHeaders = [:]
    ) -> Request {
        switch encodeJSON(json, encoder: encoder, method: method) {
        case .success(let body): request(method, body: body, contentType: "application/json", headers: headers)
        case .failure(let error): failedRequest(method, error)
        }
    }

    /// `json` encoded, or the error a request for it fails with.
    func encodeJSON<Body: Encodable>(
        _ json: Body, encoder: JSONEncoder, method: HTTPMethod
    ) -> Result<Data, ResourceError> {
        do {
            return .success(try encoder.encode(json))
        } catch {
            return .failure(
                ResourceError(
                    .invalidRequestBody, message: "the \(Body.self) body does not encode as JSON: \(error)",
                    method: method, url: urlString, timestamp: core.timeSource.now, cause: error))
        }
    }

    /// A request that has already failed with `error`, having sent nothing.
    func failedRequest(_ method: HTTPMethod, _ error: ResourceError) -> Request {
        let request = Request(method: method, url: urlString, timeSource: core.timeSource, resolve: nil)
        request.complete(with: .failure(error))
        return request
    }

    /// Sends `request`, and turns what comes back into an outcome: a 304, new data through `pipeline`, or a failure
    /// naming the request.
    func exchange(
        _ request: TransportRequest, pipeline: Pipeline, capture: LockedValue<CachedEntity?>? = nil,
        reportingTo progress: Request? = nil
    ) async -> RequestOutcome {
        let logging = core.logging
        logging.network.debug("→ \(request.method) \(request.url.absoluteString)")
        let response: TransportResponse
        do {
            let report: TransportProgressHandler? = progress.map { request in
                { @Sendable in request.transportProgressed($0) }
            }
            response = try await core.transport.send(request, progress: report)
        } catch {
            let failure = transportFailure(error, request: request)
            // The failure reaches the caller and the observers: a library logs it at debug (swift-log's guidance).
            if !failure.isCancellation {
                logging.network.debug(
                    "request failed", metadata: ["request": "\(request)", "error": "\(failure.message)"])
            }
            return .failure(failure)
        }
        logging.network.debug(
            "← \(response.status) \(request.method) \(request.url.absoluteString)",
            metadata: ["bytes": "\(response.body.count)"])
        // The server is back: durable mutations waiting out a failure are tried now.
        if response.status < 500, response.status != 408, response.status != 429 { core.durable.serverAnswered() }
        let now = core.timeSource.now
        if response.status == 304 { return .notModified(nil) }
        let entity = Entity(content: response.body, headers: response.headers, timestamp: now)
        guard response.isSuccess else {
            var errorEntity = entity
            if let text = try? TextTransformer.decode(response.body, charset: entity.charset) {
                errorEntity.content = text
            }
            return .failure(
                ResourceError(
                    .httpStatus(response.status), message: HTTPStatus.message(for: response.status),
                    method: request.method, url: request.url.absoluteString, entity: errorEntity, timestamp: now))
        }
        capture?.withLock {
            $0 = CachedEntity(
                body: response.body,
                headers: response.headers.map { CachedEntity.Header(name: $0.name, value: $0.value) },
                timestamp: now)
        }
        switch pipeline.process(entity) {
        case .success(let entity):
            return .newData(entity)
        case .failure(let failure):
            return .failure(
                ResourceError(
                    .transformFailed(failure.stage), message: "the \(failure.stage) stage failed: \(failure.error)",
                    method: request.method, url: request.url.absoluteString, timestamp: now, cause: failure.error))
        }
    }

    private func transportFailure(_ error: any Error, request: TransportRequest) -> ResourceError {
        let now = core.timeSource.now
        let url = request.url.absoluteString
        switch error {
        case let error as TransportError where error.kind == .cancelled:
            return ResourceError(
                .cancelled, message: "the request was cancelled", method: request.method, url: url, timestamp: now,
                cause: error)
        case let error as TransportError:
            return ResourceError(
                .transport(error.kind), message: error.message, method: request.method, url: url, timestamp: now,
                cause: error)
        case is CancellationError:
            return ResourceError(
                .cancelled, message: "the request was cancelled", method: request.method, url: url, timestamp: now,
                cause: error)
        default:
            return ResourceError(
                .transport(.other), message: "\(error)", method: request.method, url: url, timestamp: now,
                cause: error)
        }
    }
}

/// Messages for HTTP statuses.
enum HTTPStatus {
    static func message(for status: Int) -> String {
        let reason: String? =
            switch status {
            case 400: "Bad Request"
            case 401: "Unauthorized"
            case 403: "Forbidden"
            case 404: "Not Found"
            case 405: "Method Not Allowed"
            case 408: "Request Timeout"
            case 409: "Conflict"
            case 410: "Gone"
            case 412: "Precondition Failed"
            case 422: "Unprocessable Content"
            case 429: "Too Many Requests"
            case 500: "Internal Server Error"
            case 502: "Bad Gateway"
            case 503: "Service Unavailable"
            case 504: "Gateway Timeout"
            default: nil
            }
        return "HTTP \(status)" + (reason.map { " (\($0))" } ?? "")
    }
}
