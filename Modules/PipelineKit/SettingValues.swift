import Foundation

/// A duration as configuration writes it: seconds as a number (`2.5`) or text with a unit (`250ms`, `2s`, `1.5m`,
/// `1h`).
package struct DurationSetting: Decodable, Sendable, Hashable {
    /// The duration.
    package var duration: Duration

    /// Makes a setting.
    package init(_ duration: Duration) {
        self.duration = duration
    }

    /// Decodes a number of seconds, or text with a unit.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let seconds = try? container.decode(Double.self) {
            guard let value = Self.duration(seconds: seconds) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath,
                        debugDescription: "not a usable duration: at most 100 years either way"))
            }
            duration = value
            return
        }
        guard let text = try? container.decode(String.self), let parsed = Self.parse(text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "not a duration: write seconds as a number (2.5) or a number and a unit: ms, s, m or h (250ms)")
            )
        }
        duration = parsed
    }

    /// `250ms`, `2s`, `1.5m`, `1h` (spaces allowed before the unit); nil when it is none of those.
    package static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (unit, seconds) in units where trimmed.hasSuffix(unit) {
            let number = trimmed.dropLast(unit.count).trimmingCharacters(in: .whitespaces)
            guard let value = Double(number) else { return nil }
            return duration(seconds: value * seconds)
        }
        return nil
    }

    /// The longest duration configuration accepts, either way: 100 years. (A fuzzer's find: `1e300h` trapped when
    /// converted to whole milliseconds.)
    package static let limit = Duration.seconds(100 * 365 * 24 * 3600)

    /// `seconds` as a duration in whole milliseconds; nil when not finite or beyond ``limit``.
    static func duration(seconds: Double) -> Duration? {
        guard seconds.isFinite, abs(seconds) <= Double(limit.components.seconds) else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}

/// A size in bytes as configuration writes it: a number of bytes, or text with a unit (`512KB`, `64MB`, `2GiB`;
/// KB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024).
package struct ByteCountSetting: Decodable, Sendable, Hashable {
    /// The size in bytes.
    package var bytes: Int

    /// Makes a setting.
    package init(bytes: Int) {
        self.bytes = bytes
    }

    /// Decodes a number of bytes, or text with a unit.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int.self) {
            bytes = value
            return
        }
        guard let text = try? container.decode(String.self), let parsed = Self.parse(text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "not a size: write bytes as a number, or a number and a unit: KB, MB, GB, KiB, MiB or GiB (512MB)"
                ))
        }
        bytes = parsed
    }

    /// `512KB`, `64MB`, `2GiB`, `100B`; nil when it is none of those.
    package static func parse(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("B", 1),
        ]
        for (unit, factor) in units where trimmed.uppercased().hasSuffix(unit.uppercased()) {
            let number = trimmed.dropLast(unit.count).trimmingCharacters(in: .whitespaces)
            // Within ±2^62, so that the conversion to Int can never trap (negative sizes are refused by the caller).
            guard let value = Double(number), value.isFinite, abs(value * factor) < 4.6e18 else { return nil }
            return Int((value * factor).rounded())
        }
        return nil
    }
}
