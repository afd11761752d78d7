import Foundation
import TetherConcurrency
public import TransportKit

/// A transport that misbehaves at random, for fault-injection tests: it drops requests (connection refused),
/// resets them mid-exchange (connection failed), delays them, and corrupts response bodies — each with its own
/// probability, from a seeded generator so a failing run can be replayed. Everything else goes to `base`.
///
/// ```swift
/// let faulty = FaultyTransport(base: transport, faults: .init(drop: 0.1, reset: 0.1, delay: 0.2, corrupt: 0.1), seed: 42)
/// faulty.faults = .none        // heal it
/// ```
public final class FaultyTransport: Transport {
    /// How often each fault happens (each 0…1, drawn independently per request, in this order).
    public struct Faults: Sendable, Hashable {
        /// The request fails at once with `connectionRefused`.
        public var drop: Double
        /// The request reaches `base`, then fails with `connectionFailed` (the connection was reset).
        public var reset: Double
        /// The answer is held back up to ``maxDelay`` first.
        public var delay: Double
        /// The body is corrupted: truncated, or bytes flipped.
        public var corrupt: Double
        /// The longest delay.
        public var maxDelay: Duration

        /// Makes a mix of faults.
        public init(
            drop: Double = 0, reset: Double = 0, delay: Double = 0, corrupt: Double = 0,
            maxDelay: Duration = .milliseconds(20)
        ) {
            self.drop = drop
            self.reset = reset
            self.delay = delay
            self.corrupt = corrupt
            self.maxDelay = maxDelay
        }

        /// No faults.
        public static let none = Faults()
    }

    /// What happened, counted.
    public struct Counts: Sendable, Hashable {
        /// Requests sent.
        public var requests = 0
        /// Requests dropped.
        public var dropped = 0
        /// Exchanges reset.
        public var reset = 0
        /// Answers delayed.
        public var delayed = 0
        /// Bodies corrupted.
        public var corrupted = 0
    }

    private let base: any Transport
    private let state: LockedValue<(faults: Faults, random: SeededRandom, counts: Counts)>

    /// Wraps `base`; `seed` makes the faults repeatable.
    public init(base: any Transport, faults: Faults, seed: UInt64) {
        self.base = base
        self.state = LockedValue((faults, SeededRandom(seed: seed), Counts()))
    }

    /// The faults in force; change them at any time (set ``Faults/none`` to heal the transport).
    public var faults: Faults {
        get { state.withLock { $0.faults } }
        set { state.withLock { $0.faults = newValue } }
    }

    /// What happened so far.
    public var counts: Counts { state.withLock { $0.counts } }

    /// Sends `request` through `base`, with the faults drawn for it.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let (drop, reset, delay, corrupt, corruption) = state.withLock { state in
            state.counts.requests += 1
            let faults = state.faults
            let drop = state.random.next() < faults.drop
            let reset = state.random.next() < faults.reset
            let delay = state.random.next() < faults.delay ? faults.maxDelay * state.random.next() : nil
            let corrupt = state.random.next() < faults.corrupt
            return (drop, reset, delay, corrupt, state.random.nextWord())
        }
        if drop {
            state.withLock { $0.counts.dropped += 1 }
            throw TransportError(.connectionRefused, request: request, message: "fault injected: connection refused")
        }
        if let delay {
            state.withLock { $0.counts.delayed += 1 }
            try await Task.sleep(for: delay)
        }
        var response = try await base.send(request)
        if reset {
            state.withLock { $0.counts.reset += 1 }
            throw TransportError(
                .connectionFailed, request: request, message: "fault injected: connection reset by peer")
        }
        if corrupt, !response.body.isEmpty {
            state.withLock { $0.counts.corrupted += 1 }
            var body = Array(response.body)
            if corruption % 2 == 0 {
                body.removeLast(max(1, body.count / 2))
            } else {
                for index in stride(from: Int(corruption % 7), to: body.count, by: 5) { body[index] ^= 0x5A }
            }
            response = TransportResponse(status: response.status, headers: response.headers, body: Data(body))
        }
        return response
    }
}

/// A small, seeded generator (SplitMix64), so that fault-injection runs can be replayed.
public struct SeededRandom: Sendable {
    private var state: UInt64

    /// Starts from `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func nextWord() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The next number in 0..<1.
    public mutating func next() -> Double {
        Double(nextWord() >> 11) / Double(1 << 53)
    }
}
