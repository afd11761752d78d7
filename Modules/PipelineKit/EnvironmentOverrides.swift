import Yams

/// The environment variables that replace values from the configuration file, applied before decoding (so their
/// values are checked like the file's, and problems name the variable):
///
/// | Variable | Replaces |
/// |---|---|
/// | `TETHER_BASE_URL` | every service's `base_url` |
/// | `TETHER_<SERVICE>_BASE_URL` | `services.<service>.base_url` (name upper-cased, `-` as `_`); wins over `TETHER_BASE_URL` |
/// | `TETHER_STORE_PATH` | `persistence.store_path` |
/// | `TETHER_CACHE_PATH` | `persistence.cache_path` |
///
/// An empty variable counts as unset.
package enum EnvironmentOverrides {
    /// The variable for one service's base URL: `TETHER_DEMO_BASE_URL` for `demo`.
    package static func baseURLVariable(forService name: String) -> String {
        "TETHER_" + name.uppercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined() + "_BASE_URL"
    }

    /// Applies `environment` to `root`; returns which paths were replaced, by which variable.
    static func apply(_ environment: [String: String], to root: inout Node) -> [ConfigurationPath: String] {
        func value(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        guard case .mapping(var top) = root else { return [:] }
        var applied: [ConfigurationPath: String] = [:]
        if case .mapping(var services)? = top["services"] {
            for pair in services {
                guard case .mapping(var service) = pair.value, let name = pair.key.string else { continue }
                guard
                    let variable = [baseURLVariable(forService: name), "TETHER_BASE_URL"].first(where: {
                        value($0) != nil
                    }),
                    let url = value(variable)
                else { continue }
                service["base_url"] = Node(url)
                services[pair.key] = .mapping(service)
                applied[ConfigurationPath([.key("services"), .key(name), .key("base_url")])] = variable
            }
            top["services"] = .mapping(services)
        }
        if case .mapping(var persistence)? = top["persistence"] {
            for (variable, key) in [("TETHER_STORE_PATH", "store_path"), ("TETHER_CACHE_PATH", "cache_path")] {
                guard let path = value(variable) else { continue }
                persistence[key] = Node(path)
                applied[ConfigurationPath([.key("persistence"), .key(key)])] = variable
            }
            top["persistence"] = .mapping(persistence)
        }
        root = .mapping(top)
        return applied
    }
}
