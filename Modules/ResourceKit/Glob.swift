/// A compiled glob, Siesta's syntax:
///
/// | Token | Matches |
/// |---|---|
/// | `*` | any run of characters within one path segment (no `/`), the empty run included |
/// | `?` | exactly one character within a path segment (not `/`) |
/// | `**` | any run of characters, across segments |
/// | `/**/` | `/`, or `/` + any run + `/`: zero or more whole segments, so `/foo/**/baz` matches `/foo/baz` |
/// | anything else | itself |
struct Glob: Sendable, Hashable {
    enum Token: Sendable, Hashable {
        case literal([UInt8])
        case star
        case question
        case doubleStar
        /// `/**/`: zero or more whole segments between two slashes.
        case segments
    }

    let tokens: [Token]
    let pattern: String

    init(_ pattern: String) {
        self.pattern = pattern
        var tokens: [Token] = []
        var literal: [UInt8] = []
        let bytes = Array(pattern.utf8)
        func flush() {
            if !literal.isEmpty { tokens.append(.literal(literal)) }
            literal = []
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/"), index + 3 < bytes.count, bytes[index + 1] == UInt8(ascii: "*"),
                bytes[index + 2] == UInt8(ascii: "*"), bytes[index + 3] == UInt8(ascii: "/")
            {
                flush()
                tokens.append(.segments)
                index += 3  // the closing slash starts what follows: `/**/**/` chains
                continue
            }
            if byte == UInt8(ascii: "*") {
                flush()
                if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                    tokens.append(.doubleStar)
                    index += 2
                } else {
                    tokens.append(.star)
                    index += 1
                }
            } else if byte == UInt8(ascii: "?") {
                flush()
                tokens.append(.question)
                index += 1
            } else {
                literal.append(byte)
                index += 1
            }
        }
        flush()
        self.tokens = tokens
    }

    func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { matches(tokens[...], $0[...]) }
    }

    private func matches(_ tokens: ArraySlice<Token>, _ text: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard let token = tokens.first else { return text.isEmpty }
        let rest = tokens.dropFirst()
        let slash = UInt8(ascii: "/")
        switch token {
        case .literal(let literal):
            guard text.count >= literal.count, text.prefix(literal.count).elementsEqual(literal) else { return false }
            return matches(rest, text.dropFirst(literal.count))
        case .question:
            guard let first = text.first, first != slash else { return false }
            return matches(rest, text.dropFirst())
        case .segments:
            // `/**/` is held here without its closing slash, which begins what follows. Zero segments: nothing is
            // taken (`/foo` + `/baz`). Otherwise a run that begins with `/` and ends just before a `/`.
            if matches(rest, text) { return true }
            guard text.first == slash else { return false }
            var index = text.index(after: text.startIndex)
            while index < text.endIndex {
                if text[index] == slash, matches(rest, text[index...]) { return true }
                index = text.index(after: index)
            }
            return false
        case .star, .doubleStar:
            var candidate = text
            while true {
                if matches(rest, candidate) { return true }
                guard let first = candidate.first else { return false }
                if token == .star, first == slash { return false }
                candidate = candidate.dropFirst()
            }
        }
    }
}
