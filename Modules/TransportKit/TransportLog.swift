public import Logging
import TetherClock

/// The metadata every transport logs, built in one place so that redaction cannot be forgotten: header values of
/// a request's ``TransportRequest/sensitiveHeaders`` and passwords in URLs never reach a log line.
///
/// Adapters log a request at `debug` (method, URL, body size) and its headers at `trace`; a response at `debug`
/// (status, body size, duration) and its headers at `trace`; a failure at `debug` with its kind and message.
public enum TransportLog {
    /// `http.method`, `http.url` (password redacted) and `http.request.body_size`; with `includeHeaders`, also
    /// `http.request.headers` (credentials redacted).
    public static func metadata(for request: TransportRequest, includeHeaders: Bool = false) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "http.method": .string(request.method.rawValue),
            "http.url": .string(request.url.redactedForLogging),
            "http.request.body_size": .stringConvertible(request.body?.count ?? 0),
        ]
        if includeHeaders {
            metadata["http.request.headers"] = headerMetadata(request.headers, sensitive: request.sensitiveHeaders)
        }
        return metadata
    }

    /// The request's metadata plus `http.status`, `http.response.body_size` and `http.duration_ms`; with
    /// `includeHeaders`, also `http.response.headers` (credentials redacted).
    public static func metadata(
        for response: TransportResponse, to request: TransportRequest, duration: Duration,
        includeHeaders: Bool = false
    ) -> Logger.Metadata {
        var metadata = metadata(for: request)
        metadata["http.status"] = .stringConvertible(response.status)
        metadata["http.response.body_size"] = .stringConvertible(response.body.count)
        metadata["http.duration_ms"] = .stringConvertible(Int(duration.timeInterval * 1000))
        if includeHeaders {
            metadata["http.response.headers"] = headerMetadata(response.headers, sensitive: request.sensitiveHeaders)
        }
        return metadata
    }

    /// `error.kind`, `error.message` and `error.attempts`, plus the failed request's metadata.
    public static func metadata(for error: TransportError) -> Logger.Metadata {
        [
            "http.method": .string(error.method.rawValue),
            "http.url": .string(error.url.redactedForLogging),
            "error.kind": .string(error.kind.name),
            "error.message": .string(error.message),
            "error.attempts": .stringConvertible(error.attempts),
        ]
    }

    /// Logs `request` (debug) and its headers (trace), redacted.
    public static func logSending(_ request: TransportRequest, to logger: Logger) {
        logger.debug("sending", metadata: metadata(for: request, includeHeaders: logger.logLevel <= .trace))
    }

    /// Logs `response` (debug) and its headers (trace), redacted.
    public static func logReceived(
        _ response: TransportResponse, to request: TransportRequest, after duration: Duration, logger: Logger
    ) {
        logger.debug(
            "received",
            metadata: metadata(
                for: response, to: request, duration: duration, includeHeaders: logger.logLevel <= .trace)
        )
    }

    /// Logs `error` at debug.
    public static func logFailed(_ error: TransportError, to logger: Logger) {
        logger.debug("failed", metadata: metadata(for: error))
    }

    static func headerMetadata(_ headers: HTTPHeaders, sensitive: Set<String>) -> Logger.MetadataValue {
        .array(headers.redacted(alsoRedacting: sensitive).fields.map { .string("\($0.name): \($0.value)") })
    }
}
