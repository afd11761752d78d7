import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import TransportKit

/// From what AsyncHTTPClient and SwiftNIO throw to ``TransportError/Kind-swift.struct``.
enum NIOErrorMapping {
    static func transportError(_ error: any Error, request: TransportRequest, maxResponseSize: Int) -> TransportError {
        if let error = error as? TransportError { return error }
        let (kind, detail) = classify(error, maxResponseSize: maxResponseSize)
        return TransportError(kind, request: request, message: detail, cause: error)
    }

    static func classify(_ error: any Error, maxResponseSize: Int) -> (TransportError.Kind, String) {
        switch error {
        case let error as HTTPClientError:
            return (kind(of: error), "HTTPClientError: \(error)")
        case let error as NIOConnectionError:
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                return (
                    .hostNotFound,
                    "\(error.host) did not resolve: \(error.dnsAError.map { "\($0)" } ?? "") \(error.dnsAAAAError.map { "\($0)" } ?? "")"
                )
            }
            let refused = error.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
            return (
                refused ? .connectionRefused : .connectionFailed,
                "could not connect to \(error.host):\(error.port): \(error)"
            )
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: return (.connectionRefused, "connection refused: \(error)")
            case ETIMEDOUT: return (.timedOut, "\(error)")
            default: return (.connectionFailed, "\(error)")
            }
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return (.timedOut, "connect timeout: \(error)")
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed:
                return (.connectionFailed, "the connection closed: \(error)")
            default: return (.connectionFailed, "\(error)")
            }
        case is SocketAddressError:
            return (.hostNotFound, "\(error)")
        case let error as HTTPParserError:
            // The connection closing in the middle of a body surfaces as the parser's unexpected end of stream.
            if error == .invalidEOFState {
                return (.connectionFailed, "the connection closed before the response was complete")
            }
            return (.malformedResponse, "not a valid HTTP response: \(error)")
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return (.tlsFailure, "TLS: \(error)")
        case is NIOTooManyBytesError:
            return (.responseTooLarge, "the response body is larger than \(maxResponseSize) bytes")
        case is CancellationError:
            return (.cancelled, "the calling task was cancelled")
        default:
            return (.other, "\(type(of: error)): \(error)")
        }
    }

    static func kind(of error: HTTPClientError) -> TransportError.Kind {
        switch error {
        case .cancelled, .requestStreamCancelled: .cancelled
        case .connectTimeout, .deadlineExceeded, .readTimeout, .writeTimeout, .tlsHandshakeTimeout,
            .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            .timedOut
        case .remoteConnectionClosed, .bodyLengthMismatch, .uncleanShutdown: .connectionFailed
        case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath: .invalidURL
        case .redirectLimitReached, .redirectCycleDetected: .tooManyRedirects
        case .alreadyShutdown: .other
        default: .other
        }
    }
}
