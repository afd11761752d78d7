import TetherJSON

/// The documents one response holds, as a mirror writes them. A pure value: no store, no resource.
struct MirrorDocuments: Sendable, Equatable {
    /// One document: its id, and the response's object it comes from, whose `_id` is set to that id when it is
    /// written. The object is the response's own (shared, not copied): the document with its `_id` is made only for
    /// the documents written, and compared as text without being made.
    struct Entry: Sendable, Equatable {
        var id: String
        /// The object as the response has it.
        var element: JSONValue
        /// Whether the id comes from another field than `_id`, so that `_id` is set on the way to the store.
        var setsID: Bool

        /// The document as it is stored: the element, its `_id` set to the id.
        var value: JSONValue {
            guard setsID, case .object(var members) = element else { return element }
            members["_id"] = .string(id)
            return .object(members)
        }

        /// ``value``'s canonical JSON text, which a store keeping text holds for it.
        var canonicalText: String {
            setsID ? element.jsonText(setting: "_id", to: .string(id)) : element.jsonText
        }
    }

    /// The documents, in the response's order.
    var entries: [Entry]
    /// Whether the response was a list. A list is the whole of the mirror's scope: a document in the scope that the
    /// list does not hold is removed. One document removes nothing.
    var isList: Bool

    /// Where to look, and what identifies a document.
    struct Shape: Sendable, Equatable {
        /// The members leading from the response to the documents (`data.items` is `["data", "items"]`); empty for
        /// the response itself.
        var path: [String]
        /// The members leading from a document to its id (`_id`, `id`, `meta.key`).
        var idField: [String]
        /// The path as written, for messages.
        var pathText: String { path.joined(separator: ".") }
        /// The id field as written, for messages.
        var idText: String { idField.joined(separator: ".") }

        init(path: String?, idField: String) {
            self.path = (path ?? "").split(separator: ".", omittingEmptySubsequences: true).map(String.init)
            self.idField = idField.split(separator: ".", omittingEmptySubsequences: true).map(String.init)
        }
    }

    /// The documents `content` holds.
    ///
    /// - Throws: ``MirrorError`` — the path is missing, it leads to something other than an array or an object, an
    ///   element is not an object or has no string id, or two elements have the same id. Nothing of a response that
    ///   throws is mirrored.
    init(_ content: JSONValue, shape: Shape, url: String) throws(MirrorError) {
        var value = content
        for (depth, member) in shape.path.enumerated() {
            guard let next = value[member] else {
                let reached = shape.path.prefix(depth).joined(separator: ".")
                throw MirrorError(
                    .missingPath,
                    "the response has no member \"\(member)\"\(reached.isEmpty ? "" : " in \(reached)")"
                        + " (\(value.kindName) there)",
                    url: url, path: shape.pathText)
            }
            value = next
        }
        switch value {
        case .array(let elements):
            var entries: [Entry] = []
            entries.reserveCapacity(elements.count)
            var seen: [String: Int] = [:]
            seen.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                let entry = try Self.entry(element, element: index, shape: shape, url: url)
                if let first = seen.updateValue(index, forKey: entry.id) {
                    throw MirrorError(
                        .duplicateID, "elements \(first) and \(index) have the same id \"\(entry.id)\"", url: url,
                        path: shape.pathText, element: index, id: entry.id)
                }
                entries.append(entry)
            }
            self.init(entries: entries, isList: true)
        case .object:
            self.init(entries: [try Self.entry(value, element: nil, shape: shape, url: url)], isList: false)
        default:
            throw MirrorError(
                .notArrayOrObject,
                "the response \(shape.path.isEmpty ? "" : "at \(shape.pathText) ")is \(value.kindName),"
                    + " not an array of documents or one document",
                url: url, path: shape.pathText)
        }
    }

    init(entries: [Entry], isList: Bool) {
        self.entries = entries
        self.isList = isList
    }

    private static func entry(_ element: JSONValue, element index: Int?, shape: Shape, url: String)
        throws(MirrorError) -> Entry
    {
        let which = index.map { "element \($0)" } ?? "the document"
        guard case .object = element else {
            throw MirrorError(
                .notArrayOrObject, "\(which) is \(element.kindName), not a document (a JSON object)", url: url,
                path: shape.pathText, element: index)
        }
        var idValue: JSONValue? = element
        for member in shape.idField { idValue = idValue?[member] }
        guard let idValue else {
            throw MirrorError(
                .invalidID, "\(which) has no id \"\(shape.idText)\"", url: url, path: shape.pathText, element: index)
        }
        guard case .string(let id) = idValue, !id.isEmpty else {
            throw MirrorError(
                .invalidID, "\(which)'s id \"\(shape.idText)\" is \(idValue.jsonText), not a non-empty string",
                url: url, path: shape.pathText, element: index)
        }
        return Entry(id: id, element: element, setsID: shape.idField != ["_id"])
    }
}
