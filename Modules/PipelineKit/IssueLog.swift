import TetherConcurrency

/// Where decoding records what is wrong, so that one pass reports every problem instead of the first. The loader
/// puts one in the decoder's `userInfo`; settings decoded without one throw at their first problem instead.
final class IssueLog: Sendable {
    struct Entry: Sendable {
        var kind: ConfigurationError.Issue.Kind
        var path: ConfigurationPath
        /// Whether the issue is about the key itself (an unknown key) rather than its value.
        var pointsAtKey: Bool
        var message: String
        /// A column within the value's text (a query's column), added to the value's own.
        var columnOffset: Int?
    }

    private let state = LockedValue<(entries: [Entry], pluginPaths: Set<ConfigurationPath>)>(([], []))

    func record(_ entry: Entry) {
        state.withLock { $0.entries.append(entry) }
    }

    var entries: [Entry] { state.withLock { $0.entries } }

    /// Marks `path` as a plugin's mapping, where `type` is a known key beside the plugin's own settings.
    func markPluginMapping(_ path: ConfigurationPath) {
        _ = state.withLock { $0.pluginPaths.insert(path) }
    }

    func isPluginMapping(_ path: ConfigurationPath) -> Bool {
        state.withLock { $0.pluginPaths.contains(path) }
    }
}

extension CodingUserInfoKey {
    /// The ``IssueLog`` decoding records into.
    static let tetherIssueLog = CodingUserInfoKey(rawValue: "tether.issue-log")!
    /// The ``PluginRegistry`` that `type:` names are looked up in.
    static let tetherPluginRegistry = CodingUserInfoKey(rawValue: "tether.plugin-registry")!
}

/// A problem found while decoding, thrown when there is no ``IssueLog`` to record it in (settings decoded on
/// their own, outside ``ConfigurationLoader``). The loader turns it into an issue with a line.
struct ConfigurationProblem: Error, Sendable {
    var entry: IssueLog.Entry
}
