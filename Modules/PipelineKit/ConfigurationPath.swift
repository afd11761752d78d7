/// Where a value sits in the configuration: `services.demo.resources[1].expiry`.
package struct ConfigurationPath: Sendable, Hashable, CustomStringConvertible {
    /// One step: a key in a mapping or an index in a list.
    package enum Component: Sendable, Hashable {
        /// A key in a mapping.
        case key(String)
        /// A position in a list (from 0).
        case index(Int)
    }

    /// The steps from the document's root.
    package var components: [Component]

    /// Makes a path.
    package init(_ components: [Component] = []) {
        self.components = components
    }

    /// The path of a `Decoder`'s or a `DecodingError`'s coding path.
    package init(codingPath: [any CodingKey]) {
        components = codingPath.map { key in
            if let index = key.intValue, key.stringValue.hasPrefix("Index ") || key.stringValue == String(index) {
                return .index(index)
            }
            return .key(key.stringValue)
        }
    }

    /// This path and one more key.
    package func appending(_ key: String) -> ConfigurationPath {
        ConfigurationPath(components + [.key(key)])
    }

    /// `services.demo.resources[1].expiry`.
    package var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key): text += text.isEmpty ? key : "." + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }
}
