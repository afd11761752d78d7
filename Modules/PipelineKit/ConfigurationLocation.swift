import Yams

/// Where a key sits in the configuration file, kept after loading so that a part that fails to assemble (a
/// database that will not open) is reported at its line.
package struct ConfigurationLocation: Sendable, Hashable {
    /// The line, from 1.
    package var line: Int
    /// The column, from 1.
    package var column: Int

    /// Every key's location in `root`, by path.
    static func index(_ root: Node) -> [ConfigurationPath: ConfigurationLocation] {
        var locations: [ConfigurationPath: ConfigurationLocation] = [:]
        func walk(_ node: Node, _ path: ConfigurationPath) {
            switch node {
            case .mapping(let mapping):
                for pair in mapping {
                    guard let key = pair.key.string else { continue }
                    let child = path.appending(key)
                    if let mark = pair.key.mark {
                        locations[child] = ConfigurationLocation(line: mark.line, column: mark.column)
                    }
                    walk(pair.value, child)
                }
            case .sequence(let sequence):
                for (index, element) in sequence.enumerated() {
                    let child = ConfigurationPath(path.components + [.index(index)])
                    if let mark = element.mark {
                        locations[child] = ConfigurationLocation(line: mark.line, column: mark.column)
                    }
                    walk(element, child)
                }
            default:
                break
            }
        }
        walk(root, ConfigurationPath())
        return locations
    }
}
