import Yams

/// Finds where a key path sits in the YAML, to give each issue its line and column.
struct NodeLocator {
    let root: Node
    let overrides: [ConfigurationPath: String]

    func issue(for entry: IssueLog.Entry) -> ConfigurationError.Issue {
        var issue = ConfigurationError.Issue(kind: entry.kind, path: entry.path.description, message: entry.message)
        if let variable = overrides.first(where: { entry.path.components.starts(with: $0.key.components) })?.value {
            issue.environmentVariable = variable
            return issue
        }
        let (keyNode, valueNode) = locate(entry.path)
        let mark: Mark?
        if entry.pointsAtKey {
            mark = keyNode?.mark ?? valueNode?.mark
        } else if case .scalar(let scalar)? = valueNode {
            mark = scalar.mark
            if entry.kind == .wrongType { issue.message += ", found \(Self.describe(scalar))" }
            if let offset = entry.columnOffset, let mark {
                let quoted = scalar.style == .singleQuoted || scalar.style == .doubleQuoted
                issue.line = mark.line
                issue.column = mark.column + offset - 1 + (quoted ? 1 : 0)
                return issue
            }
        } else {
            if entry.kind == .wrongType, let valueNode { issue.message += ", found " + Self.describe(valueNode) }
            mark = keyNode?.mark ?? valueNode?.mark
        }
        issue.line = mark?.line
        issue.column = mark?.column
        return issue
    }

    /// The key node and the value node at `path` (the nearest existing ancestor's when it does not exist).
    func locate(_ path: ConfigurationPath) -> (key: Node?, value: Node?) {
        var key: Node?
        var value: Node? = root
        for component in path.components {
            switch (component, value) {
            case (.key(let name), .mapping(let mapping)?):
                guard let pair = mapping.first(where: { $0.key.string == name }) else { return (key, value) }
                key = pair.key
                value = pair.value
            case (.index(let index), .sequence(let sequence)?):
                guard index < sequence.count else { return (key, value) }
                key = nil
                value = sequence[index]
            default:
                return (key, value)
            }
        }
        return (key, value)
    }

    static func describe(_ node: Node) -> String {
        switch node {
        case .scalar(let scalar): return describe(scalar)
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    static func describe(_ scalar: Node.Scalar) -> String {
        scalar.string.isEmpty ? "nothing" : "'\(scalar.string)'"
    }
}
