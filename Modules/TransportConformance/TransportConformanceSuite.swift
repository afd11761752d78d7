import TetherConcurrency
public import TransportKit

/// The checks every `Transport` must pass — ours and yours — run against a real HTTP server and a misbehaving
/// TCP peer on loopback (``LoopbackConformanceHost``), or against the in-memory host.
///
/// Run each check as a test of its own, so that a failure names the behaviour that broke:
///
/// ```swift
/// import Testing
/// import TransportConformance
///
/// @Test(arguments: TransportConformanceSuite.checks)
/// func myTransportConforms(_ check: ConformanceCheck) async throws {
///     try await TransportConformanceSuite.run(check) { options in
///         MyTransport(followingRedirects: options.redirects)
///     }
/// }
/// ```
///
/// A failed check throws a ``ConformanceFailure`` saying what was expected and what came back.
///
/// If your client holds up its other exchanges while one of them works — FoundationNetworking serves every
/// `URLSession` in the process on one queue — run ``heavyChecks`` in a test that never runs beside ``lightChecks``
/// (Tether's own tests mark it `.loadsEveryCore`), or a light check's deadline measures the heavy one.
public enum TransportConformanceSuite {
    /// Every check, in a stable order.
    public static let checks: [ConformanceCheck] =
        exchangeChecks + progressChecks + failureChecks + retryChecks + redirectChecks

    /// The checks that may keep the client busy for seconds (``ConformanceCheck/isHeavy``), in a stable order.
    public static var heavyChecks: [ConformanceCheck] { checks.filter(\.isHeavy) }

    /// Every other check: each has deadlines, measured as if nothing else kept the client busy.
    public static var lightChecks: [ConformanceCheck] { checks.filter { !$0.isHeavy } }

    /// Runs `check` against transports made by `makeTransport`, on a fresh loopback host that is stopped after.
    /// Each transport made is handed to `release` at the end (shut an owned client down there).
    public static func run(
        _ check: ConformanceCheck,
        makeTransport: @escaping @Sendable (ConformanceOptions) async throws -> any Transport,
        release: @escaping @Sendable (any Transport) async -> Void = { _ in }
    ) async throws {
        try await LoopbackConformanceHost.with { host in
            try await run(check, host: host, makeTransport: makeTransport, release: release)
        }
    }

    /// Runs `check` against `InMemoryTransport`, on an ``InMemoryConformanceHost``.
    public static func runInMemory(_ check: ConformanceCheck) async throws {
        let host = InMemoryConformanceHost()
        try await run(check, host: host) { options in
            host.makeTransport(redirects: options.redirects, connectTimeout: options.connectTimeout)
        }
    }

    /// Runs `check` on `host` with transports made by `makeTransport`, releasing each after.
    public static func run(
        _ check: ConformanceCheck, host: any ConformanceHost,
        makeTransport: @escaping @Sendable (ConformanceOptions) async throws -> any Transport,
        release: @escaping @Sendable (any Transport) async -> Void = { _ in }
    ) async throws {
        let context = ConformanceContext(host: host, factory: makeTransport)
        do {
            try await check.body(context)
        } catch {
            for transport in context.made { await release(transport) }
            throw error
        }
        for transport in context.made { await release(transport) }
    }
}

/// What a check may ask of the transport under test.
public struct ConformanceOptions: Sendable, Hashable {
    /// The redirect policy the transport must apply.
    public var redirects: RedirectPolicy
    /// The connect timeout the transport must apply.
    public var connectTimeout: Duration

    /// Makes options; the defaults are the transports' defaults.
    public init(redirects: RedirectPolicy = .default, connectTimeout: Duration = .seconds(10)) {
        self.redirects = redirects
        self.connectTimeout = connectTimeout
    }
}

/// One behaviour every transport must show.
public struct ConformanceCheck: Sendable, CustomStringConvertible {
    /// A short, stable name (`close-mid-body`).
    public let name: String
    /// What the check expects, in a sentence.
    public let summary: String
    /// Whether the check may keep the client busy for seconds, beyond its own exchange.
    ///
    /// `unasked-coding` sends a 256 MiB gzip bomb: a client that decompresses on its own — FoundationNetworking
    /// does, inside libcurl, whatever the request asked for — inflates what one read of the socket brings before the
    /// refusal reaches it, and FoundationNetworking does so on the one queue every `URLSession` in the process
    /// shares (0.75 s on an idle two-core machine, about 5 s beside a full test run). Any other exchange of that
    /// client waits meanwhile, and a check beside it with a 10 s deadline can miss it through no fault of its own
    /// (two did, in CI). Run ``TransportConformanceSuite/heavyChecks`` apart from
    /// ``TransportConformanceSuite/lightChecks``.
    public let isHeavy: Bool
    let body: @Sendable (ConformanceContext) async throws -> Void

    init(
        _ name: String, _ summary: String, heavy: Bool = false,
        body: @escaping @Sendable (ConformanceContext) async throws -> Void
    ) {
        self.name = name
        self.summary = summary
        self.isHeavy = heavy
        self.body = body
    }

    /// The name.
    public var description: String { name }
}

/// A check that did not pass: which one, and what differed.
public struct ConformanceFailure: Error, CustomStringConvertible {
    /// What was expected and what came back.
    public var message: String
    /// The message.
    public var description: String { message }
}

/// The host and the transport factory a check runs with.
final class ConformanceContext: Sendable {
    let host: any ConformanceHost
    private let factory: @Sendable (ConformanceOptions) async throws -> any Transport
    private let transports = LockedValue<[any Transport]>([])

    init(host: any ConformanceHost, factory: @escaping @Sendable (ConformanceOptions) async throws -> any Transport) {
        self.host = host
        self.factory = factory
    }

    var made: [any Transport] { transports.withLock { $0 } }

    func transport(_ options: ConformanceOptions = ConformanceOptions()) async throws -> any Transport {
        let transport = try await factory(options)
        transports.withLock { $0.append(transport) }
        return transport
    }
}

// MARK: - Assertions

func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw ConformanceFailure(message: message()) }
}

/// Sends `request` and returns the response, failing the check if the transport throws.
func send(_ transport: any Transport, _ request: TransportRequest) async throws -> TransportResponse {
    do {
        return try await transport.send(request)
    } catch {
        throw ConformanceFailure(message: "\(request): expected a response, got \(error)")
    }
}

/// Sends `request` and returns the `TransportError` it must fail with, of one of `kinds`, within `bound`.
@discardableResult
func expectFailure(
    _ transport: any Transport, _ request: TransportRequest, kinds: Set<TransportError.Kind>, within bound: Duration
) async throws -> TransportError {
    let clock = ContinuousClock()
    let start = clock.now
    let outcome: Result<TransportResponse, any Error>
    do { outcome = .success(try await transport.send(request)) } catch { outcome = .failure(error) }
    let elapsed = clock.now - start
    switch outcome {
    case .success(let response):
        throw ConformanceFailure(
            message:
                "\(request): expected a failure of kind \(kinds.map(\.name).sorted()), got status \(response.status) with \(response.body.count) bytes"
        )
    case .failure(let error as TransportError):
        try require(
            kinds.contains(error.kind),
            "\(request): expected kind \(kinds.map(\.name).sorted()), got \(error.kind) — \(error.message)")
        try require(
            error.method == request.method && error.url == request.url,
            "\(request): the error names \(error.method) \(error.url) instead")
        try require(
            elapsed <= bound, "\(request): failed with \(error.kind) only after \(elapsed), expected within \(bound)")
        return error
    case .failure(let error):
        throw ConformanceFailure(message: "\(request): expected a TransportError, got \(type(of: error)): \(error)")
    }
}

/// Every value of `name`, whether sent as separate fields or comma-joined (RFC 9110 §5.3 allows both).
func splitValues(_ headers: HTTPHeaders, _ name: String) -> [String] {
    headers.values(for: name).flatMap { $0.split(separator: ",") }.map { String($0.filter { $0 != " " }) }
}
