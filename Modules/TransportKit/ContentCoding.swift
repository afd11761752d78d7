/// Content codings (RFC 9110, section 8.4) as every transport handles them: a request asks for none unless its
/// sender asked for one, and a response coded in a way the request did not accept is refused at its head.
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
