/// How a service's mutations behave (`mutations:`), turned into ResourceKit's `idempotencyKeyHeader` and
/// `maxPendingMutations`.
///
/// ```yaml
/// mutations:
///   idempotency_header: Idempotency-Key   # `none` sends no key
///   max_pending: 1000                     # a mutation past it fails at once
/// ```
package struct MutationSettings: Decodable, Sendable, Hashable {
    /// The header field that carries each mutation's idempotency key; nil sends none.
    package var idempotencyHeader: String?
    /// How many mutations may be pending at once, across the service.
    package var maxPending: Int

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case idempotencyHeader = "idempotency_header"
        case maxPending = "max_pending"
    }

    /// ResourceKit's defaults: `Idempotency-Key`, 1,000 pending.
    package init(idempotencyHeader: String? = "Idempotency-Key", maxPending: Int = 1_000) {
        self.idempotencyHeader = idempotencyHeader
        self.maxPending = maxPending
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
    }
}
