extension JSONValue {
    /// The deepest nesting of arrays and objects the parser accepts: deeper text is an error, not a stack overflow.
    public static let maximumNestingDepth = 512

    /// Parses JSON text (RFC 8259: one value, surrounded by optional white space).
    ///
    /// - Throws: ``JSONParseError`` saying what was expected and at which line and column.
    public init(parsing text: String) throws(JSONParseError) {
        var text = text
        let parsed = text.withUTF8 { bytes in Result { () throws(JSONParseError) in try JSONParser.parse(bytes) } }
        self = try parsed.get()
    }

    /// Parses JSON from UTF-8 bytes (`Data`, `[UInt8]`, …).
    ///
    /// - Throws: ``JSONParseError`` saying what was expected and at which line and column.
    public init(parsing bytes: some Collection<UInt8>) throws(JSONParseError) {
        let parsed: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) in try JSONParser.parse(buffer) }
        }
        if let parsed {
            self = try parsed.get()
        } else {
            let copy = Array(bytes)
            let parsed = copy.withUnsafeBufferPointer { buffer in
                Result { () throws(JSONParseError) in try JSONParser.parse(buffer) }
            }
            self = try parsed.get()
        }
    }
}

/// A recursive-descent parser over UTF-8 bytes.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes)
        return try parser.parseDocument()
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhiteSpace()
        guard index < bytes.count else { throw error("expected a JSON value, found the end of the text") }
        let value = try parseValue()
        skipWhiteSpace()
        guard index == bytes.count else { throw error("expected the end of the text after the value, found \(found)") }
        return value
    }

    // MARK: Values

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw error("expected a value, found the end of the text") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("expected a value, found \(found)")
        }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhiteSpace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhiteSpace()
            guard peek(UInt8(ascii: "\"")) else {
                throw error("expected a member name in double quotes, found \(found)")
            }
            let key = try parseString()
            skipWhiteSpace()
            guard peek(UInt8(ascii: ":")) else { throw error("expected ':' after the member name, found \(found)") }
            index += 1
            skipWhiteSpace()
            members[key] = try parseValue()
            skipWhiteSpace()
            if peek(UInt8(ascii: ",")) {
                index += 1
            } else if peek(UInt8(ascii: "}")) {
                index += 1
                depth -= 1
                return .object(members)
            } else {
                throw error("expected ',' or '}' after an object member, found \(found)")
            }
        }
    }

    mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1
        var elements: [JSONValue] = []
        skipWhiteSpace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhiteSpace()
            elements.append(try parseValue())
            skipWhiteSpace()
            if peek(UInt8(ascii: ",")) {
                index += 1
            } else if peek(UInt8(ascii: "]")) {
                index += 1
                depth -= 1
                return .array(elements)
            } else {
                throw error("expected ',' or ']' after an array element, found \(found)")
            }
        }
    }

    mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        guard depth <= JSONValue.maximumNestingDepth else {
            throw error("nesting deeper than \(JSONValue.maximumNestingDepth) arrays and objects")
        }
    }

    mutating func expectWord(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        let matches = index + count <= bytes.count && (0..<count).allSatisfy { bytes[index + $0] == word.utf8Start[$0] }
        guard matches else { throw error("expected a value, found \(found)") }
        index += count
    }

    // MARK: Numbers

    mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = index
        if peek(UInt8(ascii: "-")) { index += 1 }
        if peek(UInt8(ascii: "0")) {
            index += 1
        } else {
            guard digits() > 0 else { throw error("expected a digit, found \(found)") }
        }
        if peek(UInt8(ascii: ".")) {
            index += 1
            guard digits() > 0 else { throw error("expected a digit after the decimal point, found \(found)") }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard digits() > 0 else { throw error("expected a digit in the exponent, found \(found)") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            index = start
            throw error("the number \(text) is out of range")
        }
        return value
    }

    mutating func digits() -> Int {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return index - start
    }

    // MARK: Strings

    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // the opening quote
        let start = index
        // The fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return try validated(slice, at: start)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("a control character must be escaped in a string") }
            index += 1
        }
        var scalars: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try scalars.withUnsafeBufferPointer { buffer throws(JSONParseError) in
                    try validated(buffer, at: start)
                }
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &scalars)
            case 0..<0x20:
                throw error("a control character must be escaped in a string")
            default:
                scalars.append(byte)
                index += 1
            }
        }
        throw error("expected '\"' to end the string, found the end of the text")
    }

    func validated(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) throws(JSONParseError) -> String {
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw error("the string is not valid UTF-8", at: start)
        }
        return string
    }

    mutating func parseEscape(into output: inout [UInt8]) throws(JSONParseError) {
        guard index < bytes.count else { throw error("expected an escape after '\\', found the end of the text") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): output.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(UInt8(ascii: "\n"))
        case UInt8(ascii: "r"): output.append(UInt8(ascii: "\r"))
        case UInt8(ascii: "t"): output.append(UInt8(ascii: "\t"))
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw error("expected a low surrogate '\\uDC00'…'\\uDFFF' after a high surrogate") }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("expected a low surrogate after a high one") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("a low surrogate without a high one")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("not a Unicode scalar") }
            output.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            index -= 1
            throw error("expected one of \" \\ / b f n r t u after '\\', found \(found)")
        }
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count else {
                throw error("expected 4 hex digits after '\\u', found the end of the text")
            }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("expected 4 hex digits after '\\u', found \(found)")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    // MARK: Positions

    mutating func skipWhiteSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    /// What is at the current position, for messages: `'x'` or `the end of the text`.
    var found: String {
        guard index < bytes.count else { return "the end of the text" }
        let byte = bytes[index]
        if byte >= 0x20, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    func error(_ message: String, at offset: Int? = nil) -> JSONParseError {
        let offset = min(offset ?? index, bytes.count)
        var line = 1
        var lineStart = 0
        for position in 0..<offset where bytes[position] == UInt8(ascii: "\n") {
            line += 1
            lineStart = position + 1
        }
        return JSONParseError(message: message, offset: offset, line: line, column: offset - lineStart + 1)
    }
}
