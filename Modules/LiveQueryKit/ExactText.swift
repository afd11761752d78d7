/// A string compared and hashed by its UTF-8 bytes, where `String` compares by Unicode canonical equivalence: a query
/// compares strings byte by byte (as SQLite's BINARY collation does), so two texts that are canonically equivalent but
/// spelled differently — `é` as one scalar or as `e` and an accent — make different queries, and must not share an
/// entry of a ``BoundedCache``.
struct ExactText: Hashable, Sendable {
    let string: String

    init(_ string: String) {
        self.string = string
    }

    static func == (lhs: ExactText, rhs: ExactText) -> Bool {
        lhs.string.utf8.elementsEqual(rhs.string.utf8)
    }

    func hash(into hasher: inout Hasher) {
        let hashed: Void? = string.utf8.withContiguousStorageIfAvailable {
            hasher.combine(bytes: UnsafeRawBufferPointer($0))
        }
        if hashed == nil {
            for byte in string.utf8 { hasher.combine(byte) }
        }
        hasher.combine(0xFF as UInt8)  // not a UTF-8 byte: ends the text, for a key made of several
    }
}
