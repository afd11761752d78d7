import Foundation
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit
import URLSessionAdapter

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers `http://held.invalid/…` with 200 "held", once its gate is open. FoundationNetworking calls
/// `startLoading()` on the session's work queue, so the first request holds that queue at the gate — as a large body
/// being inflated there does — and every call that waits for the queue waits with it. Every session's work queue
/// targets one queue the process shares (FoundationNetworking of Swift 6.3), so every session in the process waits.
final class HeldWorkQueueProtocol: URLProtocol {
    static let gate = AsyncGate()
    static let host = "held.invalid"

    static func url(_ path: String) -> URL {
        var components = URLComponents()
        components.scheme = "http"
        components.host = host
        components.path = "/" + path
        return components.url ?? URL(fileURLWithPath: "/")
    }

    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.host == host
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    override func startLoading() {
        Self.gate.passBlocking()
        guard let url = request.url,
            let response = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "4"])
        else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data("held".utf8))
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

/// The test holds FoundationNetworking's process-wide queue for a fraction of a second (for 20 s if the transport
/// waits for it): apart from the tests with deadlines and from the other tests that hold that queue up (`.holdsUp`),
/// and on a thread of its own, so that its own deadlines run even while Swift concurrency's threads wait for that
/// queue in other tests. Three minutes, as the suites beside it: a limit catches a hang.
@Suite(
    "URLSessionTransport while FoundationNetworking's work queue is busy", .timeLimit(minutes: 3),
    .holdsUp(.foundationNetworkingQueue), .onDedicatedThread)
struct BusyWorkQueueTests {
    /// A request started on `executor`, and its result once it has one.
    struct Started: Sendable {
        let task: Task<Void, Never>
        let result: LockedValue<Result<TransportResponse, any Error>?>

        init(on executor: DispatchQueueExecutor, _ send: @escaping @Sendable () async throws -> TransportResponse) {
            let result = LockedValue<Result<TransportResponse, any Error>?>(nil)
            self.result = result
            task = Task(executorPreference: executor) {
                let outcome: Result<TransportResponse, any Error>
                do { outcome = .success(try await send()) } catch { outcome = .failure(error) }
                result.withLock { $0 = outcome }
            }
        }

        /// The kind of error it failed with, once it has returned.
        func failure() async throws -> TransportError.Kind? {
            try await eventually(within: .seconds(20)) { result.withLock { $0 != nil } }
            guard case .failure(let error) = result.withLock({ $0 }) else { return nil }
            return (error as? TransportError)?.kind
        }
    }

    @Test(
        "With the session's work queue held, send holds no caller's thread; a timeout and a cancellation return at once"
    )
    func heldWorkQueue() async throws {
        let gate = HeldWorkQueueProtocol.gate
        defer { gate.open() }
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.protocolClasses = [HeldWorkQueueProtocol.self]
        let transport = URLSessionTransport(sessionConfiguration: sessionConfiguration)
        let held = Task { try await transport.send(TransportRequest(url: HeldWorkQueueProtocol.url("held"))) }
        try await eventually { gate.isReached }

        // One thread for the callers below, as one of Swift concurrency's is: a call that waited for the work queue
        // would hold it, and nothing after it could run.
        let thread = DispatchQueueExecutor(label: "tether.tests.caller")
        let timingOut = Started(on: thread) {
            try await transport.send(
                TransportRequest(url: HeldWorkQueueProtocol.url("timeout"), timeout: .milliseconds(200)))
        }
        let cancelled = Started(on: thread) {
            try await transport.send(TransportRequest(url: HeldWorkQueueProtocol.url("cancel")))
        }
        let after = OneShot<Void>()
        Task(executorPreference: thread) { after.fire() }
        // The thread ran both sends to their first wait, then this job.
        try await eventually(within: .seconds(20)) { after.hasFired }

        // The work queue is still held; each ends with its own reason.
        #expect(try await timingOut.failure() == .timedOut)
        cancelled.task.cancel()
        #expect(try await cancelled.failure() == .cancelled)
        #expect(!held.isCancelled)

        // Once the queue is free, the held request completes and the session serves new ones.
        gate.open()
        let response = try await held.value
        #expect(response.status == 200)
        #expect(response.body == Data("held".utf8))
        let again = try await transport.send(TransportRequest(url: HeldWorkQueueProtocol.url("again")))
        #expect(again.status == 200)
    }
}
