import CTetherZlib
import Foundation

/// Content codings (RFC 9110, section 8.4) as every transport handles them: a request asks for none unless its
/// sender asked for one, a response coded in a way the request did not accept is refused at its head, and a body in
/// a coding the request asked for is handed over decoded (``decoded(_:for:limit:)``), as URLSession hands it over.
///
/// Without an `Accept-Encoding` field a server may use any coding, and FoundationNetworking advertises
/// `gzip, br, zstd` and decompresses inside libcurl, ahead of any size check: a 2 MB gzip body can expand to
/// gigabytes before the transport sees a byte. Asking for `identity` keeps honest servers from compressing; refusing
/// an unasked coding at the head stops a hostile one before its body is read.
package enum ContentCoding {
    /// `headers` as sent: with `Accept-Encoding: identity` added unless they name an `Accept-Encoding` of their own.
    package static func identityUnlessAsked(_ headers: HTTPHeaders) -> HTTPHeaders {
        guard headers["Accept-Encoding"] == nil else { return headers }
        var sent = headers
        sent["Accept-Encoding"] = "identity"
        return sent
    }

    /// The error for a response whose body is coded in a way `request` did not accept, or nil when it may be read.
    package static func refusal(of response: HTTPHeaders, to request: TransportRequest) -> TransportError? {
        guard let coding = unaccepted(response: response, request: request.headers) else { return nil }
        let accepted = request.headers["Accept-Encoding"] ?? "identity"
        return TransportError(
            .malformedResponse, request: request,
            message: "the body is coded '\(coding)', which the request did not accept (Accept-Encoding: \(accepted))")
    }

    /// The codings of a response that the request did not accept (`"gzip"`), or nil when the body is not coded or
    /// every coding was accepted. `request` holds the headers the request carried before
    /// ``identityUnlessAsked(_:)``; without an `Accept-Encoding` of its own it accepted only `identity`.
    package static func unaccepted(response: HTTPHeaders, request: HTTPHeaders) -> String? {
        let codings = tokens(response.values(for: "Content-Encoding")).filter { $0 != "identity" }
        guard !codings.isEmpty else { return nil }
        let accepted = Set(
            tokens(request.values(for: "Accept-Encoding")).compactMap { token -> String? in
                // `gzip;q=0` refuses gzip; any other weight accepts it.
                let parts = token.split(separator: ";").map { $0.trimmingSpaces }
                let weight = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) }
                return weight == 0 ? nil : parts.first.map(String.init)
            })
        if accepted.contains("*") { return nil }
        let refused = codings.filter { !accepted.contains($0) }
        return refused.isEmpty ? nil : refused.joined(separator: ", ")
    }

    /// `response` with its body decoded from the codings its `Content-Encoding` names, last applied first, into at
    /// most `limit` bytes; its headers stay as the server sent them. `gzip` (and `x-gzip`) and `deflate` are
    /// decoded; a body in any other coding the request asked for fails with `malformedResponse`, as does a damaged
    /// one, and one that decodes to more than `limit` bytes fails with `responseTooLarge`. An empty body (a `HEAD`
    /// response's, a 204's) stays empty.
    package static func decoded(_ response: TransportResponse, for request: TransportRequest, limit: Int) throws
        -> TransportResponse
    {
        let codings = tokens(response.headers.values(for: "Content-Encoding")).filter { $0 != "identity" }
        guard !codings.isEmpty, !response.body.isEmpty else { return response }
        var body = response.body
        for coding in codings.reversed() {
            let format: CTetherInflateFormat
            switch coding {
            case "gzip", "x-gzip": format = CTetherInflateGzip
            case "deflate": format = CTetherInflateDeflate
            default:
                throw TransportError(
                    .malformedResponse, request: request,
                    message: "the body is coded '\(coding)', which this transport cannot decode (gzip and deflate only)"
                )
            }
            body = try inflate(body, format: format, coding: coding, limit: limit, request: request)
        }
        var decoded = response
        decoded.body = body
        return decoded
    }

    private static func inflate(
        _ body: Data, format: CTetherInflateFormat, coding: String, limit: Int, request: TransportRequest
    ) throws -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        let result = body.withUnsafeBytes { input in
            ctether_inflate(
                input.bindMemory(to: UInt8.self).baseAddress, input.count, format, max(limit, 0), &output, &length)
        }
        switch result {
        case CTetherInflateDone:
            guard let output else { return Data() }
            return Data(bytesNoCopy: output, count: length, deallocator: .free)
        case CTetherInflateTooLarge:
            throw TransportError(
                .responseTooLarge, request: request,
                message: "the response body decodes ('\(coding)') to more than \(limit) bytes")
        case CTetherInflateNoMemory:
            throw TransportError(
                .responseTooLarge, request: request,
                message: "memory ran out decoding the response body ('\(coding)')")
        default:
            throw TransportError(
                .malformedResponse, request: request,
                message: "the body is not valid '\(coding)' (damaged or cut short)")
        }
    }

    /// The comma-separated, lower-cased tokens of `values`.
    private static func tokens(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces.lowercased() }.filter { !$0.isEmpty }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        let start = firstIndex { $0 != " " && $0 != "\t" } ?? endIndex
        let end = lastIndex { $0 != " " && $0 != "\t" }.map { index(after: $0) } ?? start
        return self[start..<Swift.max(start, end)]
    }
}
