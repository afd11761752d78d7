public import Foundation
public import TransportKit

/// The conformance server's behaviour, as one pure function from a request to a ``ConformancePlan``: the loopback
/// HTTP server, the misbehaving TCP peer and the in-memory host all answer with it, so that every transport meets
/// the same server whichever host carries the suite.
///
/// | Path | Answer |
/// |---|---|
/// | `/echo` (any method) | 200, JSON ``EchoReport`` of the request; `X-Echo-Method`; each `X-Probe-*` header back as `X-Reply-*`; `X-Many: a`, `X-Many: b`; `?setCookie` adds `Set-Cookie: session=s3cret-session; HttpOnly` |
/// | `/status/{code}` | that status; body `status {code}` unless the status has none |
/// | `/etag/{tag}` | 200 with `ETag: "{tag}"`, or 304 when `If-None-Match` names it |
/// | `/bytes/{n}` | `n` bytes of ``ConformanceEndpoints/pattern(count:)`` with a `Content-Length` |
/// | `/chunked/{count}/{size}` | the same pattern in `count` chunks of `size` bytes, no `Content-Length` |
/// | `/gzip/{n}` | 200, `Content-Encoding: gzip`, ``ConformanceEndpoints/gzipZeros(count:)`` of `n` zeros, whatever the request accepts |
/// | `/flaky/{key}/{failures}/{status}` | that status for the first `failures` attempts (`?retryAfter=s` adds `Retry-After`), then 200 `attempt {n}` |
/// | `/sequence/{key}/{s1},{s2},…` | the n-th request gets the n-th status (the last repeats), JSON `{"response": n, "status": s}`, `ETag: "rn"` |
/// | `/slow/{milliseconds}` | 200 `slow` after the delay |
/// | `/idempotent/{name}` (POST) | a change applied once per `Idempotency-Key` (400 without one): 201 `applied` the first time, 200 `applied before` after; the recorder keeps each key's body |
/// | `/redirect/{n}` | 302 to `/redirect/{n-1}`; `/redirect/0` is 200 `arrived` |
/// | `/redirect-to?url={percent-encoded URL}` | 302 to that URL (another origin, as `localhost` for `127.0.0.1`) |
/// | `/loop` | 302 to `/loop`, for ever |
/// | `/misbehave/{name}` | a ``Misbehaviour``; only the misbehaving peer carries it out |
public struct ConformanceEndpoints: Sendable {
    /// Attempt counts and connection events, shared by every host serving these endpoints.
    public let recorder: ConformanceRecorder

    /// Makes the endpoints with a fresh recorder.
    public init(recorder: ConformanceRecorder = ConformanceRecorder()) {
        self.recorder = recorder
    }

    /// What to answer `method path?query` with these headers and body.
    public func plan(method: String, target: String, headers: HTTPHeaders, body: Data) -> ConformancePlan {
        let (path, query) = Self.split(target)
        let segments = path.split(separator: "/").map(String.init)
        let isHead = method.uppercased() == "HEAD"
        recorder.recordRequest(path)
        switch (segments.first, segments.count) {
        case ("echo", _):
            return .respond(
                echo(method: method, path: path, query: query, headers: headers, body: body, isHead: isHead))
        case ("status", 2):
            guard let code = Int(segments[1]), (200...599).contains(code) else { return .respond(.badRequest(path)) }
            let bodiless = code == 204 || code == 304 || isHead
            return .respond(ConformanceReply(status: code, body: bodiless ? Data() : Data("status \(code)".utf8)))
        case ("etag", 2):
            let tag = "\"\(segments[1])\""
            let offered = headers.values(for: "If-None-Match").flatMap { $0.split(separator: ",") }
            if offered.contains(where: { String($0.filter { $0 != " " }) == tag }) {
                return .respond(ConformanceReply(status: 304, headers: ["ETag": tag]))
            }
            return .respond(
                ConformanceReply(
                    status: 200, headers: ["ETag": tag, "Content-Type": "text/plain"],
                    body: Data("version \(segments[1])".utf8)))
        case ("bytes", 2):
            guard let count = Int(segments[1]), count >= 0 else { return .respond(.badRequest(path)) }
            return .respond(
                ConformanceReply(
                    status: 200, headers: ["Content-Type": "application/octet-stream"], body: Self.pattern(count: count)
                ))
        case ("chunked", 3):
            guard let count = Int(segments[1]), let size = Int(segments[2]), count > 0, size > 0 else {
                return .respond(.badRequest(path))
            }
            return .respond(
                ConformanceReply(
                    status: 200, headers: ["Content-Type": "application/octet-stream"],
                    body: Self.pattern(count: count * size), chunkSize: size))
        case ("gzip", 2):
            guard let count = Int(segments[1]), count >= 0 else { return .respond(.badRequest(path)) }
            let headers: HTTPHeaders = ["Content-Type": "application/octet-stream", "Content-Encoding": "gzip"]
            return .respond(ConformanceReply(status: 200, headers: headers, body: Self.gzipZeros(count: count)))
        case ("idempotent", 2):
            guard let key = headers["Idempotency-Key"], !key.isEmpty else {
                return .respond(ConformanceReply(status: 400, body: Data("no Idempotency-Key".utf8)))
            }
            let applied = recorder.recordChange(segments[1], key: key, body: body)
            return .respond(
                ConformanceReply(
                    status: applied ? 201 : 200, headers: ["Content-Type": "text/plain"],
                    body: Data((applied ? "applied" : "applied before").utf8)))
        case ("flaky", 4):
            guard let failures = Int(segments[2]), let status = Int(segments[3]) else {
                return .respond(.badRequest(path))
            }
            let attempt = recorder.recordAttempt(segments[1])
            guard attempt > failures else {
                var headers: HTTPHeaders = ["Content-Type": "text/plain"]
                if let retryAfter = query["retryAfter"] { headers["Retry-After"] = retryAfter }
                return .respond(
                    ConformanceReply(status: status, headers: headers, body: Data("failure \(attempt)".utf8)))
            }
            return .respond(
                ConformanceReply(
                    status: 200, headers: ["Content-Type": "text/plain"], body: Data("attempt \(attempt)".utf8)))
        case ("sequence", 3):
            let statuses = segments[2].split(separator: ",").compactMap { Int($0) }
            guard !statuses.isEmpty, statuses.allSatisfy({ (200...599).contains($0) }) else {
                return .respond(.badRequest(path))
            }
            let attempt = recorder.recordAttempt(segments[1])
            let status = statuses[min(attempt, statuses.count) - 1]
            return .respond(
                ConformanceReply(
                    status: status, headers: ["Content-Type": "application/json", "ETag": "\"r\(attempt)\""],
                    body: Data(#"{"response": \#(attempt), "status": \#(status)}"#.utf8)))
        case ("slow", 2):
            guard let milliseconds = Int(segments[1]), milliseconds >= 0 else { return .respond(.badRequest(path)) }
            return .respond(
                ConformanceReply(
                    status: 200, headers: ["Content-Type": "text/plain"], body: Data("slow".utf8),
                    delay: .milliseconds(milliseconds)))
        case ("redirect", 2):
            guard let remaining = Int(segments[1]), remaining >= 0 else { return .respond(.badRequest(path)) }
            if remaining == 0 { return .respond(ConformanceReply(status: 200, body: Data("arrived".utf8))) }
            return .respond(ConformanceReply(status: 302, headers: ["Location": "/redirect/\(remaining - 1)"]))
        case ("loop", 1):
            return .respond(ConformanceReply(status: 302, headers: ["Location": "/loop"]))
        case ("redirect-to", 1):
            guard let target = query["url"]?.removingPercentEncoding, !target.isEmpty else {
                return .respond(.badRequest(path))
            }
            return .respond(ConformanceReply(status: 302, headers: ["Location": target]))
        case ("misbehave", 2):
            guard let misbehaviour = Misbehaviour(rawValue: segments[1]) else { return .respond(.badRequest(path)) }
            return .misbehave(misbehaviour)
        default:
            return .respond(ConformanceReply(status: 404, body: Data("no endpoint \(path)".utf8)))
        }
    }

    /// `count` deterministic bytes (`i % 251`), so that a body's every byte can be checked.
    public static func pattern(count: Int) -> Data {
        var data = Data(capacity: max(count, 0))
        while data.count < count {
            data.append(contentsOf: cycle.prefix(count - data.count))
        }
        return data
    }

    /// Whether `data` is exactly ``pattern(count:)`` of its length.
    public static func isPattern(_ data: Data) -> Bool {
        data.withUnsafeBytes { bytes in
            cycle.withUnsafeBytes { reference in
                var offset = 0
                while offset < bytes.count {
                    let length = min(reference.count, bytes.count - offset)
                    guard memcmp(bytes.baseAddress! + offset, reference.baseAddress!, length) == 0 else { return false }
                    offset += length
                }
                return true
            }
        }
    }

    private static let cycle = Data((0..<251).map { UInt8($0) })

    private func echo(
        method: String, path: String, query: [String: String], headers: HTTPHeaders, body: Data, isHead: Bool
    ) -> ConformanceReply {
        let report = EchoReport(
            method: method, path: path, query: query, headers: headers.fields.map { [$0.name, $0.value] },
            bodyLength: body.count, bodyChecksum: EchoReport.checksum(body))
        var replyHeaders: HTTPHeaders = ["Content-Type": "application/json", "X-Echo-Method": method]
        for field in headers where field.name.lowercased().hasPrefix("x-probe-") {
            replyHeaders.add(name: "X-Reply-" + field.name.dropFirst("x-probe-".count), value: field.value)
        }
        if query["setCookie"] != nil { replyHeaders.add(name: "Set-Cookie", value: "session=s3cret-session; HttpOnly") }
        replyHeaders.add(name: "X-Many", value: "a")
        replyHeaders.add(name: "X-Many", value: "b")
        let encoded = (try? JSONEncoder().encode(report)) ?? Data()
        return ConformanceReply(status: 200, headers: replyHeaders, body: isHead ? Data() : encoded)
    }

    static func split(_ target: String) -> (path: String, query: [String: String]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, [:]) }
        var query: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return (String(target[..<mark]), query)
    }
}

/// What `/echo` reports about the request it received.
public struct EchoReport: Codable, Sendable, Equatable {
    /// The method as received.
    public var method: String
    /// The path as received.
    public var path: String
    /// The query parameters.
    public var query: [String: String]
    /// The header fields as received, each `[name, value]`, in order.
    public var headers: [[String]]
    /// The body's length in bytes.
    public var bodyLength: Int
    /// The body's FNV-1a 64-bit hash, in hexadecimal.
    public var bodyChecksum: String

    /// The values the server received for `name` (any case), in order.
    public func values(for name: String) -> [String] {
        headers.filter { $0.count == 2 && $0[0].lowercased() == name.lowercased() }.map { $0[1] }
    }

    /// FNV-1a 64 of `data`, hexadecimal.
    public static func checksum(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        // Over the raw bytes, not Data's iterator: half the time in debug builds, where a 10 MB echo runs on one of
        // Swift concurrency's threads.
        data.withUnsafeBytes { bytes in
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        return String(hash, radix: 16)
    }
}

/// What a conformance host does with one request.
public enum ConformancePlan: Sendable {
    /// Answer with a well-formed HTTP response.
    case respond(ConformanceReply)
    /// Break the protocol (only the misbehaving peer can).
    case misbehave(Misbehaviour)
}

/// A well-formed answer: status, headers, body, optionally streamed in chunks, optionally late.
public struct ConformanceReply: Sendable {
    /// The status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Data
    /// When set, the body is streamed in pieces of this size with chunked transfer encoding.
    public var chunkSize: Int?
    /// How long to wait before answering.
    public var delay: Duration

    /// Makes a reply.
    public init(
        status: Int, headers: HTTPHeaders = [:], body: Data = Data(), chunkSize: Int? = nil, delay: Duration = .zero
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.chunkSize = chunkSize
        self.delay = delay
    }

    static func badRequest(_ path: String) -> ConformanceReply {
        ConformanceReply(status: 400, body: Data("bad parameters in \(path)".utf8))
    }
}

/// The ways the misbehaving peer breaks HTTP.
public enum Misbehaviour: String, Sendable, CaseIterable {
    /// Answers with bytes that are not HTTP, then closes.
    case garbage
    /// Sends a head promising 100,000 bytes, then 1,000 of them, then closes.
    case closeMidBody = "close-mid-body"
    /// Sends a chunked head and one chunk, then part of the next, then closes.
    case closeMidChunk = "close-mid-chunk"
    /// Accepts the connection, reads the request and never answers.
    case noAnswer = "no-answer"
    /// Sends the head and then nothing, the connection left open.
    case headThenSilence = "head-then-silence"
}
