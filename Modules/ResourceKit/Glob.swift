/// A compiled glob: `*` matches any run of characters other than `/`, `**` any run at all, everything else itself.
struct Glob: Sendable, Hashable {
    enum Token: Sendable, Hashable {
        case literal([UInt8])
        case star
        case doubleStar
    }

    let tokens: [Token]
    let pattern: String

    init(_ pattern: String) {
        self.pattern = pattern
        var tokens: [Token] = []
        var literal: [UInt8] = []
        let bytes = Array(pattern.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "*") {
                if !literal.isEmpty { tokens.append(.literal(literal)) }
                literal = []
                if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                    tokens.append(.doubleStar)
                    index += 2
                } else {
                    tokens.append(.star)
                    index += 1
                }
            } else {
                literal.append(bytes[index])
                index += 1
            }
        }
        if !literal.isEmpty { tokens.append(.literal(literal)) }
        self.tokens = tokens
    }

    func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { matches(tokens[...], $0[...]) }
    }

    private func matches(_ tokens: ArraySlice<Token>, _ text: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard let token = tokens.first else { return text.isEmpty }
        let rest = tokens.dropFirst()
        switch token {
        case .literal(let literal):
            guard text.count >= literal.count, text.prefix(literal.count).elementsEqual(literal) else { return false }
            return matches(rest, text.dropFirst(literal.count))
        case .star, .doubleStar:
            var candidate = text
            while true {
                if matches(rest, candidate) { return true }
                guard let first = candidate.first else { return false }
                if token == .star, first == UInt8(ascii: "/") { return false }
                candidate = candidate.dropFirst()
            }
        }
    }
}
