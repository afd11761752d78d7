import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TetherConcurrency

/// The demo API's writable part, for the mutations scenario: baskets of lines at `/baskets/{run}/{screen}`, read by
/// `GET` (a JSON array of strings, with an ETag) and changed by `POST` (a JSON string, the line to append).
///
/// A change is applied once per idempotency key: a change sent again with a key the server has seen gets the answer
/// it got the first time, and changes nothing. The scenario can take the API down (every request, any path, answers
/// 503) and hold the answers of changes from the n-th applied on — applied, but unanswered until released — so that
/// a process killed while it waits leaves changes the server applied and the outbox still holds.
final class DemoBaskets: Sendable {
    /// What the server did with changes.
    struct Statistics: Sendable {
        /// Each basket's lines, by path, in the order applied.
        var lines: [String: [String]] = [:]
        /// The keys of the changes applied, each once.
        var appliedKeys: Set<String> = []
        /// Changes sent again with a key already applied: answered as before, not applied again.
        var replayed = 0
        /// Requests answered 503 because the API was down.
        var refusedWhileDown = 0
        /// Changes applied whose answer is held.
        var held = 0
    }

    private struct State {
        var statistics = Statistics()
        var isDown = false
        /// The answer each key got, to answer it again.
        var answers: [String: Data] = [:]
        /// From this many applied changes on, answers are held.
        var holdFrom: Int?
        var waiting: [CheckedContinuation<Void, Never>] = []
        var keyHeader = HTTPField.Name("Idempotency-Key")!
    }

    private let state = LockedValue(State())

    var statistics: Statistics { state.withLock { $0.statistics } }

    /// The header that carries a change's idempotency key (the service's `idempotency_header`).
    func keys(in header: String) {
        guard let name = HTTPField.Name(header) else { return }
        state.withLock { $0.keyHeader = name }
    }

    /// Whether every request is answered 503.
    var isDown: Bool {
        get { state.withLock { $0.isDown } }
        set { state.withLock { $0.isDown = newValue } }
    }

    /// Holds the answer of the `count`-th applied change and of every one after it, until ``releaseHeldAnswers()``.
    func holdAnswers(fromChange count: Int) {
        state.withLock { $0.holdFrom = count }
    }

    /// Answers the held changes (into whatever is left of their connections) and holds no more.
    func releaseHeldAnswers() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.holdFrom = nil
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// When the API is down: the answer to any request.
    func downAnswer() -> Response? {
        let isDown = state.withLock { state -> Bool in
            if state.isDown { state.statistics.refusedWhileDown += 1 }
            return state.isDown
        }
        guard isDown else { return nil }
        return Response(
            status: .serviceUnavailable, headers: [.contentType: "text/plain"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: "the demo API is down")))
    }

    /// The answer to a request for `/baskets/{run}/{screen}`, or nil for another path.
    func respond(to request: Request) async throws -> Response? {
        let path = request.uri.path
        let segments = path.split(separator: "/")
        guard segments.count == 3, segments[0] == "baskets" else { return nil }
        switch request.method {
        case .get:
            let body = state.withLock { Self.json($0.statistics.lines[path] ?? []) }
            if let offered = request.headers[.ifNoneMatch], offered == Inventory.etag(for: body) {
                return Response(status: .notModified, headers: [.eTag: offered])
            }
            return Self.answer(body)
        case .post:
            let keyHeader = state.withLock { $0.keyHeader }
            guard let key = request.headers[keyHeader] else {
                return Self.refusal("a change needs an \(keyHeader) header")
            }
            let body = try await request.body.collect(upTo: 64 * 1024)
            guard let line = try? JSONDecoder().decode(String.self, from: Data(body.readableBytesView)) else {
                return Self.refusal("a change is a JSON string: the line to append")
            }
            return await apply(line, key: key, to: path)
        default:
            return Response(status: .methodNotAllowed)
        }
    }

    private func apply(_ line: String, key: String, to path: String) async -> Response {
        let (answer, holds) = state.withLock { state -> (Data, Bool) in
            if let answer = state.answers[key] {
                state.statistics.replayed += 1
                return (answer, false)
            }
            state.statistics.lines[path, default: []].append(line)
            state.statistics.appliedKeys.insert(key)
            let answer = Self.json(state.statistics.lines[path] ?? [])
            state.answers[key] = answer
            let holds = state.holdFrom.map { state.statistics.appliedKeys.count >= $0 } ?? false
            if holds { state.statistics.held += 1 }
            return (answer, holds)
        }
        if holds {
            await withCheckedContinuation { continuation in
                let released = state.withLock { state -> Bool in
                    guard state.holdFrom != nil else { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if released { continuation.resume() }
            }
        }
        return Self.answer(answer)
    }

    private static func answer(_ body: Data) -> Response {
        Response(
            status: .ok,
            headers: [.eTag: Inventory.etag(for: body), .contentType: "application/json", .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    private static func refusal(_ message: String) -> Response {
        Response(
            status: .badRequest, headers: [.contentType: "text/plain"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: message)))
    }

    private static func json(_ lines: [String]) -> Data {
        Inventory.json(lines)
    }
}
