import Foundation
import TransportKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// From what URLSession reports to ``TransportError/Kind-swift.struct``.
enum URLErrorMapping {
    static func kind(of code: URLError.Code) -> TransportError.Kind {
        switch code {
        case .cancelled: .cancelled
        case .timedOut: .timedOut
        case .cannotConnectToHost: .connectionRefused
        case .cannotFindHost, .dnsLookupFailed: .hostNotFound
        case .networkConnectionLost, .notConnectedToInternet, .resourceUnavailable: .connectionFailed
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData,
            .zeroByteResource:
            .malformedResponse
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection:
            .tlsFailure
        case .badURL, .unsupportedURL: .invalidURL
        case .httpTooManyRedirects, .redirectToNonExistentLocation: .tooManyRedirects
        case .dataLengthExceedsMaximum: .responseTooLarge
        default: .other
        }
    }

    /// The error for `error`; `afterHead` says whether the response's head had arrived (a failure after it is a
    /// connection that broke in the middle of the body).
    static func transportError(_ error: any Error, request: TransportRequest, afterHead: Bool) -> TransportError {
        if let error = error as? TransportError { return error }
        guard let urlError = error as? URLError else {
            let nsError = error as NSError
            return TransportError(
                .other, request: request, message: "\(nsError.domain) \(nsError.code): \(nsError.localizedDescription)")
        }
        var kind = kind(of: urlError.code)
        let text = urlError.localizedDescription
        if kind == .other && !afterHead && (text.contains("SSL") || text.contains("TLS")) {
            kind = .tlsFailure  // libcurl's TLS errors (OpenSSL's "wrong version number"…) arrive as unknown errors
        } else if kind == .other && afterHead {
            kind = .connectionFailed  // libcurl's "transfer closed with n bytes remaining" arrives as an unknown error
        } else if kind == .invalidURL && text.contains("HTTP/0.9") {
            kind = .malformedResponse  // libcurl reads bytes that are not HTTP as HTTP/0.9 and refuses them
        }
        return TransportError(
            kind, request: request, message: "URLError \(urlError.code.rawValue): \(urlError.localizedDescription)",
            cause: urlError)
    }
}
