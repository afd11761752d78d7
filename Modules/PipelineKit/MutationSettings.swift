/// How a service's mutations behave (`mutations:`), turned into ResourceKit's `idempotencyKeyHeader`,
/// `maxPendingMutations` and `mutationConfiguration` (the outbox itself comes from `persistence:`).
///
/// ```yaml
/// mutations:
///   idempotency_header: Idempotency-Key   # `none` sends no key
///   max_pending: 1000                     # a mutation past it fails at once
///   durable: false                        # true: every mutation goes through the persistence's outbox
///   order: per-resource                   # or per-service
///   retry_backoff: 1s                     # the first wait after a transient failure, doubling…
///   max_retry_backoff: 60s                # …up to this
/// ```
package struct MutationSettings: Decodable, Sendable, Hashable {
    /// The header field that carries each mutation's idempotency key; nil sends none.
    package var idempotencyHeader: String?
    /// How many mutations may be pending at once, across the service.
    package var maxPending: Int
    /// Whether mutations are durable unless they say otherwise.
    package var durable: Bool
    /// Whether durable mutations are ordered per resource (false) or across the service (true).
    package var orderedPerService: Bool
    /// The first wait after a transient failure.
    package var retryBackoff: Duration
    /// The longest wait between attempts.
    package var maxRetryBackoff: Duration

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case idempotencyHeader = "idempotency_header"
        case maxPending = "max_pending"
        case durable
        case order
        case retryBackoff = "retry_backoff"
        case maxRetryBackoff = "max_retry_backoff"
    }

    /// ResourceKit's defaults: `Idempotency-Key`, 1,000 pending, nothing durable, ordered per resource, 1 s
    /// doubling to 60 s.
    package init(idempotencyHeader: String? = "Idempotency-Key", maxPending: Int = 1_000) {
        self.idempotencyHeader = idempotencyHeader
        self.maxPending = maxPending
        durable = false
        orderedPerService = false
        retryBackoff = .seconds(1)
        maxRetryBackoff = .seconds(60)
    }

    /// Decodes the settings, each with its default.
    package init(from decoder: any Decoder) throws {
        self.init()
        let settings = try decoder.settings(CodingKeys.self)
        if let header = try settings.decode(.idempotencyHeader, as: String.self) {
            if header == "none" {
                idempotencyHeader = nil
            } else if ServiceConfiguration.isFieldName(header) {
                idempotencyHeader = header
            } else {
                try settings.invalid(
                    .idempotencyHeader,
                    "'\(header)' is not a header field name (letters, digits and !#$%&'*+-.^_`|~), nor `none`")
            }
        }
        maxPending = try settings.decode(.maxPending, default: maxPending, where: { $0 >= 1 }, "must be at least 1")
        durable = try settings.decode(.durable, default: durable)
        if let order = try settings.decode(.order, as: String.self) {
            switch order {
            case "per-resource": orderedPerService = false
            case "per-service": orderedPerService = true
            default: try settings.invalid(.order, "'\(order)' is not an order: per-resource or per-service")
            }
        }
        retryBackoff = try settings.duration(.retryBackoff, default: retryBackoff)
        maxRetryBackoff = try settings.duration(.maxRetryBackoff, default: maxRetryBackoff)
        if maxRetryBackoff < retryBackoff {
            try settings.invalid(
                .maxRetryBackoff, "must be at least retry_backoff (\(retryBackoff)), not \(maxRetryBackoff)")
        }
    }
}
