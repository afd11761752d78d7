import TetherJSON

extension CachedEntity {
    /// `headers` as the caches on disk and on a server store them: a JSON array of `[name, value]` pairs, in order.
    package static func encodeHeaders(_ headers: [Header]) -> String {
        JSONValue.array(headers.map { .array([.string($0.name), .string($0.value)]) }).jsonText
    }

    /// The headers stored as ``encodeHeaders(_:)`` wrote them; text that does not read as such gives none, and a
    /// pair that does not, is skipped (a cache entry is only ever a hint).
    package static func decodeHeaders(_ text: String) -> [Header] {
        guard case .array(let pairs)? = try? JSONValue(parsing: text) else { return [] }
        return pairs.compactMap { pair in
            guard case .string(let name)? = pair[0], case .string(let value)? = pair[1] else { return nil }
            return Header(name: name, value: value)
        }
    }
}
