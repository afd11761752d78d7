extension JSONValue {
    /// The value as compact JSON text with object keys sorted, so that equal values give equal text. A number that
    /// is not finite (which JSON cannot express) is written as `null`.
    public var jsonText: String {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// The UTF-8 bytes of ``jsonText``.
    public var jsonBytes: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(to: &output)
        return output
    }

    /// Appends the value's compact JSON text to `output`.
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value): Self.writeNumber(value, to: &output)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            Self.writeObject(members, setting: nil, to: &output)
        }
    }

    /// The ``jsonText`` of this object with `member` set to `value` — of `object[member] = value` — without making
    /// that object. A value that is not an object gives its own text.
    package func jsonText(setting member: String, to value: JSONValue) -> String {
        guard case .object(let members) = self else { return jsonText }
        var output: [UInt8] = []
        output.reserveCapacity(64)
        Self.writeObject(members, setting: (member, value), to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends `members` as a JSON object, keys sorted, with `setting`'s member added or replaced.
    private static func writeObject(
        _ members: [String: JSONValue], setting: (key: String, value: JSONValue)?, to output: inout [UInt8]
    ) {
        var sorted = Array(members)
        if let setting {
            if let index = sorted.firstIndex(where: { $0.key == setting.key }) {
                sorted[index].value = setting.value
            } else {
                sorted.append(setting)
            }
        }
        sorted.sort { $0.key < $1.key }
        output.append(UInt8(ascii: "{"))
        for (index, member) in sorted.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            writeString(member.key, to: &output)
            output.append(UInt8(ascii: ":"))
            member.value.write(to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    static func writeNumber(_ value: Double, to output: inout [UInt8]) {
        guard value.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        if value.rounded(.towardZero) == value, abs(value) < 9_007_199_254_740_992 {
            // Whole numbers, digit by digit: no String in between.
            var magnitude = UInt64(abs(value))
            if value < 0 { output.append(UInt8(ascii: "-")) }
            let start = output.count
            repeat {
                output.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
            } while magnitude > 0
            output[start...].reverse()
        } else {
            output.append(contentsOf: value.description.utf8)
        }
    }

    static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // The common case: nothing to escape.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            output.append(contentsOf: value.utf8)
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\n"): output.append(contentsOf: "\\n".utf8)
            case UInt8(ascii: "\r"): output.append(contentsOf: "\\r".utf8)
            case UInt8(ascii: "\t"): output.append(contentsOf: "\\t".utf8)
            case 0x08: output.append(contentsOf: "\\b".utf8)
            case 0x0C: output.append(contentsOf: "\\f".utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: "\\u00".utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
