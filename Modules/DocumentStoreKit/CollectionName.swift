public import PersistenceKit

/// The rule for collection names, applied by every ``DocumentStore`` before anything reaches storage.
public enum CollectionName {
    /// The longest name accepted, in bytes.
    public static let maximumLength = 100

    /// Checks `name`: 1 to 100 ASCII letters, digits, `_`, `-` and `.`, starting with a letter or `_`.
    ///
    /// - Throws: `PersistenceError.Kind.invalidCollectionName` saying which character or rule is at fault.
    public static func validate(_ name: String) throws(PersistenceError) {
        func fail(_ message: String) -> PersistenceError {
            PersistenceError(.invalidCollectionName, message, collection: name)
        }
        guard !name.isEmpty else { throw fail("a collection name cannot be empty") }
        guard name.utf8.count <= maximumLength else {
            throw fail("a collection name is at most \(maximumLength) bytes; this one has \(name.utf8.count)")
        }
        for (offset, byte) in name.utf8.enumerated() {
            let isLetter = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
            let isDigit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            let isPunctuation = byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            if offset == 0, !(isLetter || byte == UInt8(ascii: "_")) {
                throw fail("a collection name must start with a letter or '_'")
            }
            guard isLetter || isDigit || isPunctuation else {
                let character = byte < 0x80 ? "'\(Character(Unicode.Scalar(byte)))'" : "a non-ASCII character"
                throw fail(
                    "\(character) at offset \(offset) is not allowed in a collection name (letters, digits, '_', '-', '.')"
                )
            }
        }
    }
}
