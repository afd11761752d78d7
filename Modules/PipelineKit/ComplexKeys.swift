import Yams

/// Every key in a configuration is text. YAML also allows a sequence or a mapping as a key (`? [a, b]: …`, `[a]: …`);
/// Yams' decoder skips such a key without a word, so the settings under it would vanish. They are reported instead.
enum ComplexKeys {
    /// One issue per key in `root` that is not a scalar, at the key's line and column, in document order.
    static func issues(in root: Node) -> [ConfigurationError.Issue] {
        var issues: [ConfigurationError.Issue] = []
        collect(root, path: "", into: &issues)
        return issues
    }

    private static func collect(_ node: Node, path: String, into issues: inout [ConfigurationError.Issue]) {
        switch node {
        case .mapping(let mapping):
            for (key, value) in mapping {
                guard case .scalar(let scalar) = key else {
                    let found = if case .sequence = key { "a list" } else { "a mapping" }
                    issues.append(
                        .init(
                            kind: .wrongType, path: path, line: key.mark?.line, column: key.mark?.column,
                            message: "a key must be text, found \(found); the settings under it would be ignored"))
                    continue
                }
                collect(value, path: path.isEmpty ? scalar.string : "\(path).\(scalar.string)", into: &issues)
            }
        case .sequence(let sequence):
            for (index, element) in sequence.enumerated() { collect(element, path: "\(path)[\(index)]", into: &issues) }
        case .scalar, .alias:
            break
        }
    }
}
